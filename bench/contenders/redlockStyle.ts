/**
 * node-redlock and its fork share one API: `new Redlock(clients, settings)`,
 * `acquire([key], ttl)` that retries `retryCount` times `retryDelay ± retryJitter`
 * apart and then throws ExecutionError, and `lock.release()`. Neither takes an
 * AbortSignal, so an acquire in flight when a round ends runs to its end.
 */
import type { Redis } from 'ioredis';
import type { BenchLocker, Contender, HeldLock } from './types.js';

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

/**
 * Most critical sections per second without give-ups in a sweep of
 * retryDelay 5, 10, 20, 50, 100 ms (jitter half of it, a 10 s window like the
 * other libraries' acquire timeout) on 1 and 5 nodes; see bench/README.md.
 * The fork retries like node-redlock, so both get these settings.
 */
export const REDLOCK_STYLE_BEST = retryEvery(100, 10_000);

/** A library of this API at its defaults and at its best settings. */
export function redlockStyleContenders(
  library: Contender['library'],
  make: (clients: Redis[], settings: RedlockStyleSettings) => RedlockStyleInstance,
  isGiveUp: (error: unknown) => boolean,
): { defaults: Contender; best: Contender } {
  const contender = (variant: Contender['variant'], settings: RedlockStyleSettings, described: string): Contender => ({
    library,
    variant,
    role: 'peer',
    settings: described,
    differsIn: variant === 'best' ? ['contended'] : undefined,
    className: () => 'Redlock',
    create: (clients) => redlockStyleLocker((list) => make(list, settings), clients, isGiveUp),
  });
  const best = REDLOCK_STYLE_BEST;
  return {
    defaults: contender('defaults', {}, 'defaults: retryCount 10, retryDelay 200 ± 100 ms'),
    best: contender('best', best, `retryCount ${best.retryCount}, retryDelay ${best.retryDelay} ± ${best.retryJitter} ms`),
  };
}
