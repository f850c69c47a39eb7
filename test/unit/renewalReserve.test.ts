import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESERVE_MS, renewalReserveMs } from '../../src/clock/renewalReserve.js';

/**
 * When auto-extension's retries start, after the first failure, they come
 * every quarter of what is left (autoExtend.ts): attempts at
 * reserve × (1 − 0.75^k) after the first. The first attempt at or after
 * `pauseMs` into the reserve, or undefined if none comes before the end.
 */
function firstAttemptAfter(pauseMs: number, reserveMs: number): number | undefined {
  for (let k = 0, left = reserveMs; left > 1; k++, left *= 0.75) {
    const at = reserveMs - left;
    if (at >= pauseMs) return at;
  }
  return undefined;
}

describe('the validity auto-extension keeps for retries', () => {
  it('is half the validity for locks of up to about 6 s, as at extendAtFraction 0.5', () => {
    expect(renewalReserveMs(2_000, undefined)).toBe(1_000);
    expect(renewalReserveMs(5_000, undefined)).toBe(2_500);
    expect(renewalReserveMs(2 * RESERVE_MS, undefined)).toBe(RESERVE_MS);
  });

  it('is RESERVE_MS for a 10 s lock, and a fifth of the validity from 15 s on', () => {
    expect(renewalReserveMs(9_898, undefined)).toBe(RESERVE_MS);
    expect(renewalReserveMs(15_000, undefined)).toBe(RESERVE_MS);
    expect(renewalReserveMs(60_000, undefined)).toBe(12_000);
  });

  it('is the rest after extendAtFraction when the user set one', () => {
    expect(renewalReserveMs(10_000, 0.5)).toBe(5_000);
    expect(renewalReserveMs(10_000, 0.8)).toBeCloseTo(2_000);
    expect(renewalReserveMs(0, 0.5)).toBe(0);
  });

  it('a 10 s lock renewed with the default reserve still outlasts a 2 s pause of its nodes (README)', () => {
    const reserve = renewalReserveMs(10_000 - 102, undefined);
    const at = firstAttemptAfter(2_000, reserve);
    expect(at).toBeDefined();
    // That attempt still has the node timeout (50 ms) and more to win its quorum in.
    expect(reserve - (at as number)).toBeGreaterThan(500);
  });

  it('never keeps more than half the validity nor less than a fifth of it, nor less than RESERVE_MS where half is more', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 3_600_000, noNaN: true }), (validity) => {
        const reserve = renewalReserveMs(validity, undefined);
        expect(reserve).toBeLessThanOrEqual(validity / 2);
        expect(reserve).toBeGreaterThanOrEqual(validity / 5 - 1e-9);
        expect(reserve).toBeGreaterThanOrEqual(Math.min(validity / 2, RESERVE_MS));
      }),
    );
  });

  it('grows with the validity: a longer lock never has less time for its retries', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 3_600_000, noNaN: true }), fc.double({ min: 0, max: 3_600_000, noNaN: true }), (a, b) => {
        const [short, long] = a <= b ? [a, b] : [b, a];
        expect(renewalReserveMs(short, undefined)).toBeLessThanOrEqual(renewalReserveMs(long, undefined));
      }),
    );
  });
});
