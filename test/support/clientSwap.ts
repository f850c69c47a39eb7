/**
 * The library's public API with one change: every locker (RedisLock,
 * Redlock, the semaphores and the read-write locks) turns each ioredis
 * client it is given into a client of the kind named by
 * QUORUMLOCK_TEST_CLIENT ('node-redis' for the `redis` package, v6;
 * 'node-redis5' for v5), connected to the same server, cluster or
 * Sentinel-managed master. vitest.config.ts puts this module in place of
 * src/index.ts for the test files when the variable is set, so the same
 * suites run on every client: the tests keep checking the nodes with their
 * own ioredis clients, and the locker under test talks through the other.
 *
 * Each ioredis client maps to one node-redis client (the same client twice
 * is still refused by Redlock), which closes when the ioredis one ends: a
 * test that disconnects its client takes the locker's connection down too.
 */
import type { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import {
  createClient as createClient5,
  createCluster as createCluster5,
  createSentinel as createSentinel5,
} from 'redis5';
import * as library from '../../src/index.js';

export * from '../../src/index.js';

type Factories = { readonly client: typeof createClient; readonly cluster: typeof createCluster; readonly sentinel: typeof createSentinel };

const FACTORIES: Readonly<Record<string, Factories>> = {
  'node-redis': { client: createClient, cluster: createCluster, sentinel: createSentinel },
  'node-redis5': { client: createClient5, cluster: createCluster5, sentinel: createSentinel5 } as unknown as Factories,
};

export const TEST_CLIENT = process.env['QUORUMLOCK_TEST_CLIENT'] ?? 'ioredis';

const swapped = new WeakMap<object, library.RedisClient>();

function swap(client: unknown): unknown {
  const factories = FACTORIES[TEST_CLIENT];
  if (factories === undefined || typeof client !== 'object' || client === null || !('status' in client)) return client;
  let other = swapped.get(client);
  if (other === undefined) {
    other = counterpart(client as Redis | Cluster, factories);
    swapped.set(client, other);
  }
  return other;
}

/** The client a locker given `client` talks through: its node-redis counterpart, or itself on ioredis. */
export function lockerClientOf(client: Redis | Cluster): unknown {
  return swap(client);
}

function counterpart(client: Redis | Cluster, factories: Factories): library.RedisClient {
  const made = client.isCluster ? clusterOf(client as Cluster, factories) : standaloneOf(client as Redis, factories);
  made.on('error', () => undefined);
  // Opened at once, as an ioredis client is: the locker's first request waits for it (ConnectionGate).
  made.connect().catch(() => undefined);
  const close = (): void => {
    const closing = made.destroy() as unknown;
    if (closing instanceof Promise) closing.catch(() => undefined);
  };
  if (client.status === 'end') close();
  else client.once('end', close);
  return made as unknown as library.RedisClient;
}

function standaloneOf(client: Redis, factories: Factories) {
  const { host, port, db, keyPrefix, sentinels, name } = client.options;
  if (sentinels && sentinels.length > 0) {
    return factories.sentinel({
      name: name ?? 'mymaster',
      sentinelRootNodes: sentinels.map((sentinel) => ({ host: sentinel.host ?? 'localhost', port: sentinel.port ?? 26379 })),
    });
  }
  return factories.client({
    socket: { host: host ?? 'localhost', port: port ?? 6379, reconnectStrategy: (retries: number) => Math.min(retries * 50, 500) },
    ...(db ? { database: db } : {}),
    ...(keyPrefix ? { keyPrefix } : {}),
  });
}

function clusterOf(client: Cluster, factories: Factories) {
  const seeds = (client as unknown as { startupNodes: { host?: string; port?: number }[] }).startupNodes;
  return factories.cluster({ rootNodes: seeds.map((seed) => ({ socket: { host: seed.host ?? 'localhost', port: seed.port ?? 6379 } })) });
}

export class RedisLock extends library.RedisLock {
  constructor(client: library.RedisClient, options?: library.RedisLockOptions) {
    super(swap(client) as library.RedisClient, options);
  }
}

export class Redlock extends library.Redlock {
  constructor(clients: readonly library.RedisClient[], options?: library.RedlockOptions) {
    super((Array.isArray(clients) ? clients.map(swap) : clients) as library.RedisClient[], options);
  }
}

export class RedisSemaphore extends library.RedisSemaphore {
  constructor(client: library.RedisClient, options: library.SemaphoreOptions) {
    super(swap(client) as library.RedisClient, options);
  }
}

export class RedlockSemaphore extends library.RedlockSemaphore {
  constructor(clients: readonly library.RedisClient[], options: library.SemaphoreOptions) {
    super((Array.isArray(clients) ? clients.map(swap) : clients) as library.RedisClient[], options);
  }
}

export class RedisReadWriteLock extends library.RedisReadWriteLock {
  constructor(client: library.RedisClient, options?: library.ReadWriteLockOptions) {
    super(swap(client) as library.RedisClient, options);
  }
}

export class RedlockReadWriteLock extends library.RedlockReadWriteLock {
  constructor(clients: readonly library.RedisClient[], options?: library.ReadWriteLockOptions) {
    super((Array.isArray(clients) ? clients.map(swap) : clients) as library.RedisClient[], options);
  }
}
