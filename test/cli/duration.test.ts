import { describe, expect, it } from 'vitest';
import { parseDuration, parseWait } from '../../src/cli/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['250', 250],
    ['0', 0],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '-1s', '1.5ms', '5 m', '1d', '1e3', '99999999999'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it('enforces a minimum', () => {
    expect(() => parseDuration('0', 1)).toThrow('expected at least 1 ms');
  });
});

describe('parseWait', () => {
  it('reads forever as Infinity and anything else as a duration', () => {
    expect(parseWait('forever')).toBe(Number.POSITIVE_INFINITY);
    expect(parseWait('0')).toBe(0);
    expect(parseWait('10s')).toBe(10_000);
    expect(() => parseWait('always')).toThrow(/or forever/);
  });
});
