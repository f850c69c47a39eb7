/**
 * quorumlock's own locks beside the other systems': RedisLock on one node
 * (standalone, or a Sentinel group's master, optionally with syncReplicas)
 * and Redlock over several nodes, through ioredis as users connect. The
 * library is the bench's build of src/ (bench/library.ts), imported from
 * `libraryUrl`. A dead holder's lock goes when its TTL runs out.
 */
import { Redis } from 'ioredis';
import type { Library } from '../../library.js';
import type { Held, LockSystem, SystemSpec } from './types.js';

type RedisSpec = Extract<SystemSpec, { system: 'redis' }>;

/** Long enough that a waiter in the hot-key and fault scenarios never gives up: a wait that ends counts as an error. */
const ACQUIRE_TIMEOUT_MS = 60_000;

export async function openRedis(spec: RedisSpec): Promise<LockSystem> {
  const library = (await import(spec.libraryUrl)) as Library;
  const clients = spec.sentinel
    ? [new Redis({ sentinels: [...spec.sentinel.sentinels], name: spec.sentinel.name })]
    : (spec.urls ?? []).map((url) => new Redis(url));
  for (const client of clients) client.on('error', () => undefined);
  const options = {
    acquireTimeoutMs: ACQUIRE_TIMEOUT_MS,
    ...(spec.syncReplicas === undefined ? {} : { syncReplicas: { replicas: spec.syncReplicas } }),
  };
  const locker = spec.kind === 'Redlock' ? new library.Redlock(clients, options) : new library.RedisLock(clients[0]!, options);
  const holder = {
    async acquire(name: string): Promise<Held> {
      const lock = await locker.acquire(name, spec.ttlMs);
      return { release: async () => void (await lock.release()) };
    },
  };
  return {
    holder: async () => holder,
    async close() {
      for (const client of clients) client.disconnect();
    },
  };
}
