import { describe, expect, it } from 'vitest';
import { driftFor, validEnoughToPass, validityMs, validUntil } from '../../src/clock/validity.js';

const defaults = { driftFactor: 0.01, driftMs: 2 };

describe('drift and validity', () => {
  it('drift is ceil(ttl * driftFactor) + driftMs', () => {
    expect(driftFor(10_000, defaults)).toBe(102);
    expect(driftFor(1, defaults)).toBe(3);
    expect(driftFor(150, defaults)).toBe(4);
    expect(driftFor(1000, { driftFactor: 0, driftMs: 0 })).toBe(0);
  });

  it('validity is ttl minus elapsed minus drift, from the start read before the first request', () => {
    expect(validityMs(10_000, 500, 500, defaults)).toBe(9_898);
    expect(validityMs(10_000, 500, 1_500, defaults)).toBe(8_898);
  });

  it('validity is zero or less once elapsed reaches ttl - drift', () => {
    expect(validityMs(10_000, 0, 9_898, defaults)).toBe(0);
    expect(validityMs(10_000, 0, 9_899, defaults)).toBeLessThan(0);
  });

  it('validUntil is the instant validity reaches zero', () => {
    const until = validUntil(10_000, 1_000, defaults);
    expect(until).toBe(10_898);
    expect(validityMs(10_000, 1_000, until, defaults)).toBe(0);
  });
});

describe('validEnoughToPass', () => {
  const settings = { driftFactor: 0.01, driftMs: 2 };
  it('passes a lock that keeps at least 90% of what a fresh acquire of the taker TTL would give', () => {
    // A fresh 10 s acquire gives at best 10_000 - 102 = 9_898 ms; 90% of it is 8_908.2.
    expect(validEnoughToPass(8_909, 10_000, settings)).toBe(true);
    expect(validEnoughToPass(8_908, 10_000, settings)).toBe(false);
  });
  it('does not pass a lock to a taker that asked for more than the lock has', () => {
    expect(validEnoughToPass(900, 30_000, settings)).toBe(false);
  });
});
