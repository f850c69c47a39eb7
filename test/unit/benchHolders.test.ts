import { describe, expect, it } from 'vitest';
import { countHolders } from '../../bench/permits/holders.js';
import type { HoldRecord } from '../../bench/semaphore/worker.js';

describe("the permits bench's holder count", () => {
  it('counts a section that began with the limit already held', () => {
    const holds: HoldRecord[] = [
      [0, 10, 0],
      [1, 11, 0],
      [2, 12, 0],
    ];
    expect(countHolders(holds, 3)).toMatchObject({ maxHolders: 3, violations: 0 });
    expect(countHolders(holds, 2)).toMatchObject({ maxHolders: 3, violations: 1 });
  });

  it('takes a hold handed on at the same reading as no overlap', () => {
    const holds: HoldRecord[] = [
      [0, 5, 0],
      [5, 9, 0],
    ];
    expect(countHolders(holds, 1)).toEqual({ maxHolders: 1, violations: 0, meanHoldMs: 4.5 });
  });

  it('lets readers share and counts a writer beside anyone, and a reader beside a writer', () => {
    const readers: HoldRecord[] = [
      [0, 10, 0],
      [1, 10, 0],
    ];
    expect(countHolders(readers, undefined)).toMatchObject({ maxHolders: 2, violations: 0 });
    expect(countHolders([...readers, [5, 6, 1]], undefined).violations).toBe(1);
    expect(countHolders([[0, 10, 1], [3, 4, 0]], undefined).violations).toBe(1);
    expect(countHolders([[0, 10, 1], [10, 12, 1], [12, 13, 0]], undefined).violations).toBe(0);
  });
});
