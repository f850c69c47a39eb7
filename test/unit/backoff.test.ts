import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from '../../src/shared/backoff.js';
import { DEFAULT_RETRY } from '../../src/lock/options.js';

describe('full jitter backoff', () => {
  const retry = { ...DEFAULT_RETRY, baseDelayMs: 10, maxDelayMs: 100, factor: 2 };

  it('spreads the wait over the whole window from 0 to the exponential bound', () => {
    expect(fullJitterDelay(1, retry, () => 0)).toBe(0);
    expect(fullJitterDelay(1, retry, () => 0.999)).toBe(10);
    expect(fullJitterDelay(3, retry, () => 0.5)).toBe(20);
  });

  it('never exceeds maxDelayMs', () => {
    expect(fullJitterDelay(50, retry, () => 0.999)).toBe(100);
    expect(fullJitterDelay(1, { ...retry, baseDelayMs: 0.5, maxDelayMs: 0.5 }, () => 0.999)).toBe(0.5);
  });

  it('waits between attempts when the window is a single millisecond', () => {
    const oneMs = { ...retry, baseDelayMs: 1, maxDelayMs: 1 };
    expect(fullJitterDelay(1, oneMs, () => 0.25)).toBe(0);
    expect(fullJitterDelay(1, oneMs, () => 0.75)).toBe(1);
  });
});
