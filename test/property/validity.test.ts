/**
 * Properties of the drift and validity math (design rule 2), over the whole
 * range the options validation lets through.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DriftSettings, driftFor, validityMs, validUntil } from '../../src/clock/validity.js';
import { MAX_TTL_MS } from '../../src/lock/validate.js';
import { checkProperty, timeoutFor } from './fcConfig.js';

const RUNS = 2000;

/** Drift settings as resolveLockerOptions accepts them. */
const settingsArb: fc.Arbitrary<DriftSettings> = fc.record({
  driftFactor: fc.oneof(fc.constant(0.01), fc.double({ min: 0, max: 0.5, noNaN: true })),
  driftMs: fc.oneof(fc.constant(2), fc.nat(1000), fc.double({ min: 0, max: 1000, noNaN: true })),
});
const ttlArb = fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: MAX_TTL_MS }));
/** performance.now()-like instants: fractional milliseconds, up to about a year of uptime. */
const instantArb = fc.oneof(fc.nat(1_000_000), fc.double({ min: 0, max: 3e10, noNaN: true, noDefaultInfinity: true }));
const elapsedArb = fc.oneof(fc.nat(200_000), fc.double({ min: 0, max: MAX_TTL_MS * 2, noNaN: true, noDefaultInfinity: true }));

describe('drift and validity', () => {
  it('drift is at least driftMs and grows with the TTL', async () => {
    await checkProperty(
      fc.property(ttlArb, ttlArb, settingsArb, (a, b, s) => {
        const [shorter, longer] = a <= b ? [a, b] : [b, a];
        expect(driftFor(shorter, s)).toBeGreaterThanOrEqual(s.driftMs);
        expect(driftFor(shorter, s)).toBeLessThanOrEqual(driftFor(longer, s));
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));

  it('validity never exceeds ttl - drift(ttl)', async () => {
    await checkProperty(
      fc.property(ttlArb, instantArb, elapsedArb, settingsArb, (ttl, start, elapsed, s) => {
        const now = start + elapsed;
        const bound = ttl - driftFor(ttl, s);
        if (Number.isInteger(s.driftMs)) expect(validityMs(ttl, start, now, s)).toBeLessThanOrEqual(bound);
        // Fractional drift and the validUntil - now form: up to float rounding.
        // The sums pass through magnitudes up to the drift too (a 529 ms drift on a 16 ms TTL).
        const ulps = 4 * Number.EPSILON * Math.max(Math.abs(now), ttl, driftFor(ttl, s));
        expect(validityMs(ttl, start, now, s)).toBeLessThanOrEqual(bound + ulps);
        expect(validUntil(ttl, start, s) - now).toBeLessThanOrEqual(bound + ulps);
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));

  it('validity shrinks as time passes, by exactly the time that passed', async () => {
    await checkProperty(
      fc.property(ttlArb, fc.nat(1_000_000), fc.nat(200_000), fc.nat(200_000), settingsArb, (ttl, start, e1, e2, s) => {
        const [early, late] = e1 <= e2 ? [e1, e2] : [e2, e1];
        const before = validityMs(ttl, start, start + early, s);
        const after = validityMs(ttl, start, start + late, s);
        expect(after).toBeLessThanOrEqual(before);
        expect(before - after).toBeCloseTo(late - early, 6);
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));

  it('validity is never positive once elapsed >= ttl - drift', async () => {
    await checkProperty(
      fc.property(ttlArb, instantArb, fc.double({ min: 0, max: 1e6, noNaN: true }), settingsArb, (ttl, start, over, s) => {
        const drift = driftFor(ttl, s);
        const now = start + Math.max(0, ttl - drift) + over;
        const elapsed = now - start; // as the coordinator measures it, on one clock
        if (elapsed < ttl - drift) return; // the sum rounded below the bound
        if (Number.isInteger(s.driftMs)) {
          // Integer drift (the defaults, and any integer driftMs): exact.
          expect(validityMs(ttl, start, now, s)).toBeLessThanOrEqual(0);
        }
        // The coordinator grants while validUntil - now > 0; that sum, and a fractional
        // driftMs, are exact only up to float rounding: a few ulps of the instants.
        // The sums pass through magnitudes up to the drift too (a 529 ms drift on a 16 ms TTL).
        const ulps = 4 * Number.EPSILON * Math.max(Math.abs(now), ttl, driftFor(ttl, s));
        expect(validityMs(ttl, start, now, s)).toBeLessThanOrEqual(ulps);
        expect(validUntil(ttl, start, s) - now).toBeLessThanOrEqual(ulps);
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));

  it('validUntil is the instant at which validity reaches zero', async () => {
    await checkProperty(
      fc.property(ttlArb, fc.nat(1_000_000), fc.nat(200_000), settingsArb, (ttl, start, elapsed, s) => {
        const now = start + elapsed;
        expect(validUntil(ttl, start, s) - now).toBeCloseTo(validityMs(ttl, start, now, s), 6);
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));
});
