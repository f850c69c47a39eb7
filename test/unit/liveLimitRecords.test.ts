import { describe, expect, it } from 'vitest';
import { LiveLimitRecords, MAX_RECORDS_PER_NODE } from '../../src/semaphore/LiveLimitRecords.js';

const drift = { driftFactor: 0.01, driftMs: 2 };

function recordsAt(start = 0) {
  const clock = { time: start, now: () => clock.time };
  return { clock, records: new LiveLimitRecords(clock, drift) };
}

describe('LiveLimitRecords', () => {
  it('vouches for no record it was not told of', () => {
    const { records } = recordsAt();
    expect(records.outlives({}, 'r', 1_000, 0)).toBe(false);
  });

  it('vouches while a slot written by the answer would expire, drift counted both ways, before the record', () => {
    const { clock, records } = recordsAt(100);
    const node = {};
    // Sent at 0, the record lives 20 s more: until 0 + 20000 - (200 + 2) on our clock.
    records.note(node, 'r', 0, 20_000);
    // A 10 s slot answered within 50 ms: 50 + 10000 + (100 + 2) from now.
    clock.time = 19_798 - 10_152;
    expect(records.outlives(node, 'r', 10_000, 50)).toBe(true);
    clock.time += 1;
    expect(records.outlives(node, 'r', 10_000, 50)).toBe(false);
    // On the answer (0 ms to wait), the same slot still fits for 50 ms more.
    expect(records.outlives(node, 'r', 10_000, 0)).toBe(true);
  });

  it('is per node and per record, and forgets on request', () => {
    const { records } = recordsAt();
    const [a, b] = [{}, {}];
    records.note(a, 'r', 0, 20_000);
    expect(records.outlives(a, 'r', 1_000, 0)).toBe(true);
    expect(records.outlives(b, 'r', 1_000, 0)).toBe(false);
    expect(records.outlives(a, 'other', 1_000, 0)).toBe(false);
    records.forget(a, 'r');
    expect(records.outlives(a, 'r', 1_000, 0)).toBe(false);
  });

  it('keeps at most MAX_RECORDS_PER_NODE per node: the expired go first, then the oldest noted', () => {
    const { clock, records } = recordsAt();
    const node = {};
    records.note(node, 'short', 0, 1_000);
    for (let i = 1; i < MAX_RECORDS_PER_NODE; i++) records.note(node, `r${i}`, 0, 60_000);
    clock.time = 2_000;
    records.note(node, 'new', clock.time, 60_000);
    // 'short' had expired: it made the room, every other stays.
    expect(records.outlives(node, 'r1', 1_000, 0)).toBe(true);
    records.note(node, 'newer', clock.time, 60_000);
    // Full of live records: the one noted first goes.
    expect(records.outlives(node, 'r1', 1_000, 0)).toBe(false);
    expect(records.outlives(node, 'r2', 1_000, 0)).toBe(true);
    expect(records.outlives(node, 'newer', 1_000, 0)).toBe(true);
  });
});
