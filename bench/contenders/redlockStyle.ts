/**
 * node-redlock and its fork share one API: `new Redlock(clients, settings)`,
 * `acquire([key], ttl)` that retries `retryCount` times `retryDelay ± retryJitter`
 * apart and then throws ExecutionError, and `lock.release()`. Neither takes an
 * AbortSignal, so an acquire in flight when a round ends runs to its end.
 */
import type { Redis } from 'ioredis';
import type { BenchLocker, HeldLock } from './types.js';

export interface RedlockStyleSettings {
  readonly retryCount?: number;
  readonly retryDelay?: number;
  readonly retryJitter?: number;
}

interface RedlockStyleLock {
  release(): Promise<unknown>;
}

export interface RedlockStyleInstance {
  acquire(resources: string[], duration: number): Promise<RedlockStyleLock>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
}

/**
 * `isGiveUp` tells the library's "no quorum within the retry window"
 * (ExecutionError) from real failures.
 */
export function redlockStyleLocker(
  make: (clients: Redis[]) => RedlockStyleInstance,
  clients: readonly Redis[],
  isGiveUp: (error: unknown) => boolean,
): BenchLocker {
  const redlock = make([...clients]);
  // Both emit 'error' for every vote against (contention included); without
  // a listener EventEmitter would throw. Their READMEs say to add one.
  redlock.on('error', () => undefined);
  return {
    async acquire(key, ttlMs) {
      try {
        const lock = await redlock.acquire([key], ttlMs);
        const held: HeldLock = { release: () => lock.release() };
        return held;
      } catch (error) {
        if (isGiveUp(error)) return null;
        throw error;
      }
    },
  };
}

/** Retry settings whose window (retryCount × retryDelay) lasts about `windowMs`. */
export function retryEvery(retryDelay: number, windowMs: number): Required<RedlockStyleSettings> {
  return { retryDelay, retryJitter: Math.ceil(retryDelay / 2), retryCount: Math.ceil(windowMs / retryDelay) };
}
