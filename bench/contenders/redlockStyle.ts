/**
 * node-redlock and its fork share one API: `new Redlock(clients, settings)`,
 * `acquire([key], ttl)` that retries `retryCount` times `retryDelay ± retryJitter`
 * apart and then throws ExecutionError, and `lock.release()`. Neither takes an
 * AbortSignal: an acquire in flight when a round ends would retry on for up to
 * its whole window (10 s at the best settings), through the next rounds and
 * past the quick run's time limit. So the window goes out in slices of about a
 * second (the library's per-call `retryCount`), with the library's own delay
 * between slices; a slice that gives up after the round's signal ends the
 * acquire. Same attempts, same spacing, same give-up point as one call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { BenchLocker, Contender, HeldLock } from './types.js';

export interface RedlockStyleSettings {
  readonly retryCount?: number;
  readonly retryDelay?: number;
  readonly retryJitter?: number;
}

/** The library's defaults (node-redlock 5 and its fork). */
const DEFAULT_SETTINGS: Required<RedlockStyleSettings> = { retryCount: 10, retryDelay: 200, retryJitter: 100 };
/** How long one slice of the retry window lasts, about. */
const SLICE_MS = 1_000;

interface RedlockStyleLock {
  release(): Promise<unknown>;
}

export interface RedlockStyleInstance {
  acquire(resources: string[], duration: number, settings?: Partial<RedlockStyleSettings>): Promise<RedlockStyleLock>;
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
  settings: RedlockStyleSettings = {},
): BenchLocker {
  const redlock = make([...clients]);
  // Both emit 'error' for every vote against (contention included); without
  // a listener EventEmitter would throw. Their READMEs say to add one.
  redlock.on('error', () => undefined);
  const { retryCount, retryDelay, retryJitter } = { ...DEFAULT_SETTINGS, ...settings };
  const sliceAttempts = Math.max(1, Math.ceil(SLICE_MS / Math.max(1, retryDelay)));
  return {
    async acquire(key, ttlMs, signal) {
      let attemptsLeft = retryCount + 1;
      for (;;) {
        const attempts = Math.min(sliceAttempts, attemptsLeft);
        try {
          const lock = await redlock.acquire([key], ttlMs, { retryCount: attempts - 1 });
          const held: HeldLock = { release: () => lock.release() };
          return held;
        } catch (error) {
          if (!isGiveUp(error)) throw error;
        }
        attemptsLeft -= attempts;
        if (attemptsLeft <= 0 || signal.aborted) return null;
        await sleep(Math.max(0, retryDelay + Math.floor((Math.random() * 2 - 1) * retryJitter)));
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
    create: (clients) => redlockStyleLocker((list) => make(list, settings), clients, isGiveUp, settings),
  });
  const best = REDLOCK_STYLE_BEST;
  return {
    defaults: contender('defaults', {}, 'defaults: retryCount 10, retryDelay 200 ± 100 ms'),
    best: contender('best', best, `retryCount ${best.retryCount}, retryDelay ${best.retryDelay} ± ${best.retryJitter} ms`),
  };
}
