import type { Redis } from 'ioredis';

/** Lock requests the nodes served so far: SET (a one-key acquire) and the scripts (EVALSHA, or EVAL once a script was unknown). */
export async function lockRequests(clients: readonly Redis[]): Promise<number> {
  let total = 0;
  for (const client of clients) {
    const stats = await client.info('commandstats');
    for (const command of ['set', 'evalsha', 'eval']) {
      total += Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    }
  }
  return total;
}
