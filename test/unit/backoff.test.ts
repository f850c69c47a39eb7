import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from '../../src/lock/backoff.js';
import { DEFAULT_RETRY } from '../../src/lock/options.js';

describe('full jitter backoff', () => {
  const retry = { ...DEFAULT_RETRY, baseDelayMs: 10, maxDelayMs: 100, factor: 2 };

  it('spreads the wait over the whole window from 0 to the exponential bound', () => {
    expect(fullJitterDelay(1, retry, () => 0)).toBe(0);
    expect(fullJitterDelay(1, retry, () => 0.999)).toBe(9);
    expect(fullJitterDelay(3, retry, () => 0.5)).toBe(20);
  });

  it('never exceeds maxDelayMs', () => {
    expect(fullJitterDelay(50, retry, () => 0.999)).toBe(99);
  });
});
