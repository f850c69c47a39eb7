/**
 * One acquire + release of each contender of `npm run bench:semaphore` and of
 * `npm run bench`'s permits scenario, as that contender's users write it:
 * shared by the bench (its own process) and its across-process workers
 * (semaphore/worker.ts).
 */
import { Semaphore as PeerSemaphore, RedlockSemaphore as PeerRedlockSemaphore } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import type { Library } from '../library.js';

export const TTL_MS = 10_000;
export const LIMIT = 4;

/**
 * One acquire + release: resolves to the release once the permit (or lock)
 * is held. `writer` asks a read-write lock for its write side; every other
 * kind takes the same exclusive (or counted) hold either way.
 */
export type Cycle = (key: string, writer?: boolean) => Promise<() => Promise<unknown>>;

/** mutex, semaphore and rwlock: quorumlock's; peer: redis-semaphore's Semaphore (1 node) or RedlockSemaphore. */
export type Kind = 'mutex' | 'semaphore' | 'peer' | 'rwlock';

/** The class a kind uses on `nodes` nodes, as the reports name it. */
export function classNameOf(kind: Kind, nodes: number): string {
  const single = nodes === 1;
  switch (kind) {
    case 'mutex':
      return single ? 'RedisLock' : 'Redlock';
    case 'semaphore':
      return single ? 'RedisSemaphore' : 'RedlockSemaphore';
    case 'peer':
      return single ? 'Semaphore' : 'RedlockSemaphore';
    case 'rwlock':
      return single ? 'RedisReadWriteLock' : 'RedlockReadWriteLock';
  }
}

export function cycleOf(kind: Kind, library: Library, clients: readonly Redis[]): Cycle {
  if (kind === 'peer') return peer(clients);
  const options = { acquireTimeoutMs: 30_000, retry: { retries: 10_000, baseDelayMs: 5, maxDelayMs: 50 } };
  const single = clients.length === 1;
  if (kind === 'mutex') {
    const locker = single ? new library.RedisLock(clients[0]!, options) : new library.Redlock([...clients], options);
    return async (key) => {
      const lock = await locker.acquire(key, TTL_MS);
      return () => lock.release();
    };
  }
  if (kind === 'rwlock') {
    const rw = single ? new library.RedisReadWriteLock(clients[0]!, options) : new library.RedlockReadWriteLock([...clients], options);
    return async (key, writer = false) => {
      const lock = await (writer ? rw.write : rw.read).acquire(key, TTL_MS);
      return () => lock.release();
    };
  }
  const semaphore = single
    ? new library.RedisSemaphore(clients[0]!, { ...options, limit: LIMIT })
    : new library.RedlockSemaphore([...clients], { ...options, limit: LIMIT });
  return async (key) => {
    const lock = await semaphore.acquire(key, TTL_MS);
    return () => lock.release();
  };
}

function peer(clients: readonly Redis[]): Cycle {
  const options = { lockTimeout: TTL_MS, acquireTimeout: 30_000, refreshInterval: 0 };
  return async (key) => {
    const semaphore = clients.length === 1 ? new PeerSemaphore(clients[0]!, key, LIMIT, options) : new PeerRedlockSemaphore([...clients], key, LIMIT, options);
    await semaphore.acquire();
    return () => semaphore.release();
  };
}
