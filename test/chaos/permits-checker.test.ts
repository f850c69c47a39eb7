import { describe, expect, it } from 'vitest';
import { exclusiveOverlaps, type HoldWindow, mostHeld } from './check/permits.js';

const w = (holder: string, from: number, to: number, permits = 1, exclusive = false): HoldWindow => ({ holder, permits, exclusive, from, to });

describe('the permit checks', () => {
  it('counts the most permits held at one instant', () => {
    expect(mostHeld([w('a', 0, 10), w('b', 5, 15, 2), w('c', 12, 20)])).toMatchObject({ most: 3, at: 5, holders: ['a', 'b'] });
    // Half-open: one ending as the next starts is not an overlap.
    expect(mostHeld([w('a', 0, 10), w('b', 10, 20)]).most).toBe(1);
    expect(mostHeld([]).most).toBe(0);
  });

  it('finds a writer overlapping anyone, and nothing among readers', () => {
    expect(exclusiveOverlaps([w('r1', 0, 10), w('r2', 5, 15)])).toEqual([]);
    expect(exclusiveOverlaps([w('r1', 0, 10), w('w', 9, 12, 1, true)])).toHaveLength(1);
    expect(exclusiveOverlaps([w('w1', 0, 10, 1, true), w('w2', 10, 12, 1, true)])).toEqual([]);
  });
});
