/**
 * redis-semaphore: Mutex on one node, RedlockMutex on more. One Mutex object
 * per acquire (its identifier is per object), as its README shows. At its
 * defaults it polls every 10 ms and starts a refresh timer per lock.
 */
import type { Redis } from 'ioredis';
import { Mutex, RedlockMutex, TimeoutError, type LockOptions } from 'redis-semaphore';
import type { BenchLocker, Contender, HeldLock } from './types.js';

/**
 * Most critical sections per second in a sweep of retryInterval 1, 2, 5, 10,
 * 20, 50, 100 ms on 1 and 5 nodes (see bench/README.md): shorter intervals
 * flood Redis with SET NX once many wait.
 */
export const REDIS_SEMAPHORE_BEST_RETRY_MS = 100;

function redisSemaphore(variant: Contender['variant'], options: LockOptions, described: string): Contender {
  return {
    library: 'redis-semaphore',
    variant,
    role: 'peer',
    settings: described,
    className: (nodeCount) => (nodeCount === 1 ? 'Mutex' : 'RedlockMutex'),
    create(clients): BenchLocker {
      const [only] = clients;
      const single = clients.length === 1 ? only : undefined;
      const list: Redis[] = [...clients];
      return {
        async acquire(key, ttlMs, signal) {
          const settings: LockOptions = { lockTimeout: ttlMs, ...options };
          const mutex = single !== undefined ? new Mutex(single, key, settings) : new RedlockMutex(list, key, settings);
          try {
            await mutex.acquire(signal);
          } catch (error) {
            if (error instanceof TimeoutError || signal.aborted) return null;
            throw error;
          }
          const held: HeldLock = { release: () => mutex.release() };
          return held;
        },
      };
    },
  };
}

export const redisSemaphoreDefaults = redisSemaphore(
  'defaults',
  {},
  'defaults: acquireTimeout 10000, retryInterval 10 ms, refresh timer at 0.8 × lockTimeout',
);
export const redisSemaphoreBest = redisSemaphore(
  'best',
  { retryInterval: REDIS_SEMAPHORE_BEST_RETRY_MS, refreshInterval: 0 },
  `retryInterval ${REDIS_SEMAPHORE_BEST_RETRY_MS} ms, refreshInterval 0 (no refresh timer)`,
);
