import { describe, expect, it } from 'vitest';
import { readRenewals } from '../../src/scripts/extendMany.js';

describe("extendMany's reply", () => {
  it('is one character per lock, in order: 1 extended, 0 not', () => {
    expect(readRenewals('1011', 4)).toEqual([true, false, true, true]);
    expect(readRenewals('', 0)).toEqual([]);
  });

  it('reads a reply the client gave as bytes', () => {
    expect(readRenewals(Buffer.from('01'), 2)).toEqual([false, true]);
  });

  it('rejects a reply of another length or with other characters, rather than guess', () => {
    expect(() => readRenewals('101', 4)).toThrow(/for 4 locks/);
    expect(() => readRenewals('1x', 2)).toThrow(/for 2 locks/);
    // The old reply, one integer per lock, is not taken for a string of them.
    expect(() => readRenewals([1, 0], 2)).toThrow(/for 2 locks/);
  });
});
