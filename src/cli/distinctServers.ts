import type { Redis } from 'ioredis';
import { type NodeAddress, sameServerFailure } from './nodeUrls.js';

/** What tells one connected server from another. */
interface ServerIdentity {
  /** INFO's run_id; undefined where INFO is refused (an ACL without @dangerous) or missing. */
  readonly runId: string | undefined;
  /** The address and port the socket reached, after DNS. */
  readonly endpoint: string | undefined;
}

/**
 * Refuses one server reached under two names (localhost and 127.0.0.1, two
 * DNS names, a proxy in front of it): its vote would count twice and a lock
 * would contend with itself. The URLs cannot tell, so each connected node is
 * asked for its run_id, which also tells apart two addresses of one host.
 * One INFO per node, in parallel, once per command; none for a single node.
 * A node that could not connect is skipped: it has no vote to count twice.
 */
export async function checkDistinctServers(
  addresses: readonly NodeAddress[],
  clients: readonly Redis[],
  connectErrors: readonly (Error | undefined)[],
  timeoutMs: number,
): Promise<void> {
  if (clients.length < 2) return;
  const identities = await Promise.all(
    clients.map((client, i) => (connectErrors[i] ? undefined : identify(client, timeoutMs))),
  );
  for (let second = 1; second < identities.length; second++) {
    for (let first = 0; first < second; first++) {
      const evidence = sameServer(identities[first], identities[second]);
      const [firstAddress, secondAddress] = [addresses[first], addresses[second]];
      if (evidence && firstAddress && secondAddress) throw sameServerFailure(firstAddress, secondAddress, evidence);
    }
  }
}

/** Why a and b are one server, or undefined when they are not (or it cannot be told). */
function sameServer(a: ServerIdentity | undefined, b: ServerIdentity | undefined): string | undefined {
  if (!a || !b) return undefined;
  // Two run_ids settle it either way: a load balancer can show two servers on one endpoint.
  if (a.runId !== undefined && b.runId !== undefined) return a.runId === b.runId ? `both report run_id ${a.runId}` : undefined;
  return a.endpoint !== undefined && a.endpoint === b.endpoint ? `both connect to ${a.endpoint}` : undefined;
}

async function identify(client: Redis, timeoutMs: number): Promise<ServerIdentity> {
  const { remoteAddress, remotePort } = client.stream;
  const endpoint = remoteAddress === undefined ? undefined : `${remoteAddress.includes(':') ? `[${remoteAddress}]` : remoteAddress}:${remotePort}`;
  return { runId: await runIdOf(client, timeoutMs), endpoint };
}

/** Never rejects: a node that cannot say who it is is compared by endpoint only. */
async function runIdOf(client: Redis, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const info = client.info('server').then(
    (text) => /^run_id:(\w+)/m.exec(text)?.[1],
    () => undefined,
  );
  try {
    return await Promise.race([info, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
