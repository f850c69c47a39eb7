import type { Redis } from 'ioredis';

/** Calls of each command the node served since its stats were last reset (this INFO not counted yet). */
export async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const found = (await client.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm);
  return Object.fromEntries([...found].map(([, command, count]) => [command, Number(count)]));
}

/** Script calls (EVALSHA and EVAL) each node has served so far, node by node. */
export async function scriptCalls(clients: readonly Redis[]): Promise<number[]> {
  return Promise.all(
    clients.map(async (client) => {
      const calls = await commandCalls(client);
      return (calls['evalsha'] ?? 0) + (calls['eval'] ?? 0);
    }),
  );
}

/** Lock requests the nodes served so far: SET (a one-key acquire) and the scripts (EVALSHA, or EVAL once a script was unknown). */
export async function lockRequests(clients: readonly Redis[]): Promise<number> {
  let total = 0;
  for (const client of clients) {
    const calls = await commandCalls(client);
    for (const command of ['set', 'evalsha', 'eval']) total += calls[command] ?? 0;
  }
  return total;
}
