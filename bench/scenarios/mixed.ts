/**
 * The uncontended cycle again, with the contenders mixed: in every pass each
 * one does a short burst of acquire + release cycles, in a new random order,
 * and each burst starts on quiet connections (the previous contender's
 * slowest nodes have answered). Over hundreds of passes every contender meets
 * the same moments of this noisy machine, which turns of a fraction of a
 * second cannot promise: there one contender's turn may fall in a quiet moment
 * and another's in a busy one. Bursts, not single cycles: a lone cycle after
 * five other libraries ran finds its code cold in the CPU caches, and then the
 * size of a library's code path, more than its work, sets its time (two
 * copies of the same library measured 8% apart when one of them ran more
 * often).
 */
import type { BenchLocker } from '../contenders/types.js';
import { quantile } from '../stats.js';
import { now } from './clock.js';

export interface MixedEntrant {
  readonly locker: BenchLocker;
  readonly keyPrefix: string;
  /** Resolves once the entrant's connections have no reply pending. */
  quiet(): Promise<void>;
}

/** Cycles each entrant runs in a row per pass. */
export const MIXED_BURST = 16;

/** Each entrant's median cycle time in µs (NaN if it never completed a cycle), in the order given. */
export async function mixedP50s(entrants: readonly MixedEntrant[], passes: number, ttlMs: number): Promise<number[]> {
  const cycles = entrants.map((): number[] => []);
  const never = new AbortController().signal;
  const order = entrants.map((_, index) => index);
  for (let pass = 0; pass < passes; pass++) {
    shuffle(order);
    for (const index of order) {
      const entrant = entrants[index] as MixedEntrant;
      for (let cycle = 0; cycle < MIXED_BURST; cycle++) {
        const started = now();
        const lock = await entrant.locker.acquire(`${entrant.keyPrefix}:k`, ttlMs, never);
        if (lock === null) continue;
        await lock.release();
        cycles[index]?.push(now() - started);
      }
      await entrant.quiet();
    }
  }
  return cycles.map((ms) => (ms.length === 0 ? Number.NaN : quantile(ms, 0.5) * 1000));
}

function shuffle(items: number[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as number, items[i] as number];
  }
}
