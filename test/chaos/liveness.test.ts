import { describe, expect, it } from 'vitest';
import { type LivenessOptions, measureLiveness, merge, subtract, withoutQuorum } from './check/liveness.js';
import type { History, OpRecord, WantRecord } from './history/types.js';

const FIVE_OK = ['n0', 'n1', 'n2', 'n3', 'n4'].map((node) => ({ node, status: 'ok' as const, ms: 1 }));
let seq = 0;

function op(fields: Partial<OpRecord> & Pick<OpRecord, 'kind' | 'value' | 'invokedAt' | 'completedAt'>): OpRecord {
  seq += 1;
  return { id: `c#${seq}`, client: 'w0.c0', resources: ['r'], quorum: 3, result: 'ok', nodes: FIVE_OK, ttlMs: 600, ...fields };
}

/** A holder of `r` from `start`, valid until start + 590, released at `releasedAt` (or never). */
function held(value: string, start: number, releasedAt: number | undefined): OpRecord[] {
  const grant = op({ kind: 'acquire', value, invokedAt: start - 2, completedAt: start, validUntil: start + 590 });
  if (releasedAt === undefined) return [grant];
  return [grant, op({ kind: 'release', value, invokedAt: releasedAt, completedAt: releasedAt + 1 })];
}

function want(process: string, from: number, to: number, end: WantRecord['end'] = 'acquired'): WantRecord {
  seq += 1;
  return { id: `${process}.c0~${seq}`, client: `${process}.c0`, process, resources: ['r'], from, to, end };
}

function history(ops: OpRecord[], wants: WantRecord[]): History {
  return { ops, handovers: [], faults: [], wants };
}

const options = (extra: Partial<LivenessOptions> = {}): LivenessOptions => ({
  resource: 'r',
  run: { from: 0, to: 10_000 },
  outages: [],
  excluded: [],
  ...extra,
});

describe('liveness figure', () => {
  it('is the handoff gap when holders follow each other while others wait', () => {
    const h = history([...held('a', 100, 150), ...held('b', 155, 300), ...held('c', 310, 400)], [want('w0', 0, 100), want('w1', 50, 155), want('w2', 60, 310)]);
    const result = measureLiveness(h, options());
    expect(result.longestMs).toBe(100); // before the first grant: w0 wanted from 0
    expect(result.stretches).toBe(3);
    expect(measureLiveness(h, options({ run: { from: 100, to: 10_000 } })).longestMs).toBe(10);
  });

  it('reports a resource left free for 1.5 s while a live waiter wanted it', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w0', 0, 100), want('w1', 150, 1_700)]);
    const result = measureLiveness(h, options({ run: { from: 100, to: 10_000 } }));
    expect(result.longestMs).toBe(1_500);
    expect(result.longest).toMatchObject({ from: 200, to: 1_700, measuredFrom: 200 });
  });

  it('does not count a dead holder\'s keys, which only their TTL frees', () => {
    // a never releases (killed mid-hold): its keys live until 100 + 600 = 700.
    const h = history([...held('a', 100, undefined), ...held('b', 900, 950)], [want('w1', 150, 900)]);
    expect(measureLiveness(h, options()).longestMs).toBe(200);
  });

  it('counts a late release of a holder that outlived its validity up to its completion only', () => {
    // a was SIGSTOPped past its validity (690) and releases late: its keys were gone at 697, before they expired.
    const ops = [...held('a', 100, undefined), op({ kind: 'release', value: 'a', invokedAt: 695, completedAt: 697 }), ...held('b', 800, 850)];
    expect(measureLiveness(history(ops, [want('w1', 150, 800)]), options()).longestMs).toBe(103);
  });

  it('restarts the measurement at the loss of a waiter, whose place blocks the line until its lease passes', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700), want('w2', 150, 900, 'killed')]);
    const result = measureLiveness(h, options({ outages: [{ process: 'w2', from: 900, to: Infinity }] }));
    expect(result.longestMs).toBe(800);
    expect(result.longest?.after?.process).toBe('w2');
    expect(result.losses).toBe(1);
  });

  it('does not count a SIGSTOPped waiter as wanting, nor a stop of a process that wanted nothing as a loss', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700)]);
    const stopped = measureLiveness(h, options({ outages: [{ process: 'w1', from: 300, to: 1_600 }, { process: 'w9', from: 1_650, to: 1_660 }] }));
    // Wanted 200..300 (cut by the stop), then 1600..1700 measured from the stop's start.
    expect(stopped.longestMs).toBe(100);
    expect(stopped.losses).toBe(1);
  });

  it('takes a stall out of a stretch without ending it, nor counts it as a loss', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700)]);
    const result = measureLiveness(h, options({ stalls: [{ process: 'w1', from: 900, to: 1_300 }] }));
    // 200..1700 free while wanted, 400 ms of it with w1 unable to run: 1100 live.
    expect(result.longestMs).toBe(1_100);
    expect(result.longest).toMatchObject({ from: 200, to: 1_700, measuredFrom: 200, notLiveMs: 400 });
    expect(result.stretches).toBe(1);
    expect(result.losses).toBe(0);
  });

  it('grows across many short stalls of every waiter at once, as a busy machine deschedules them', () => {
    // Free 200..1700; both waiters' processes miss a tick together every 100 ms, for 60 ms each time.
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700), want('w2', 150, 1_700)]);
    const stalls = Array.from({ length: 15 }, (_, i) => [200 + i * 100 + 20, 200 + i * 100 + 80]).flatMap(([from, to]) => [
      { process: 'w1', from: from!, to: to! },
      { process: 'w2', from: from!, to: to! },
    ]);
    expect(measureLiveness(h, options({ stalls })).longestMs).toBe(1_500 - 15 * 60);
    // One waiter live while the other stalls: every moment counts.
    const halves = stalls.filter((s) => s.process === 'w1');
    expect(measureLiveness(h, options({ stalls: halves })).longestMs).toBe(1_500);
  });

  it('takes standstills (nothing could move) out of a stretch without ending it', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700)]);
    const result = measureLiveness(h, options({ standstills: [{ from: 500, to: 600 }, { from: 1_600, to: 1_900 }] }));
    expect(result.longestMs).toBe(1_500 - 100 - 100);
    expect(result.stretches).toBe(1);
  });

  it('measures from a loss even when stalls came between: live time after it only', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700), want('w2', 150, 900, 'killed')]);
    const result = measureLiveness(h, options({ outages: [{ process: 'w2', from: 900, to: Infinity }], stalls: [{ process: 'w1', from: 400, to: 600 }, { process: 'w1', from: 1_000, to: 1_100 }] }));
    expect(result.longestMs).toBe(800 - 100);
    expect(result.longest?.after?.process).toBe('w2');
  });

  it('leaves excluded windows (node faults) out, and cuts stretches at them', () => {
    const h = history([...held('a', 100, 200), ...held('b', 1_700, 1_800)], [want('w1', 150, 1_700)]);
    const result = measureLiveness(h, options({ excluded: [{ from: 500, to: 1_300 }] }));
    expect(result.longestMs).toBe(400);
    expect(result.coveredMs).toBe(10_000 - 800);
  });

  it('merges and subtracts intervals', () => {
    expect(merge([{ from: 5, to: 7 }, { from: 0, to: 2 }, { from: 2, to: 3 }, { from: 6, to: 9 }])).toEqual([
      { from: 0, to: 3 },
      { from: 5, to: 9 },
    ]);
    expect(subtract([{ from: 0, to: 10 }], [{ from: 2, to: 3 }, { from: 8, to: 12 }, { from: -5, to: 1 }])).toEqual([
      { from: 1, to: 2 },
      { from: 3, to: 8 },
    ]);
  });

  it('finds the windows without a quorum of nodes up', () => {
    const down = [
      { from: 0, to: 100 },
      { from: 50, to: 200 },
      { from: 80, to: 120 },
      { from: 150, to: 300 },
      { from: 190, to: 210 },
    ];
    // 5 nodes: no quorum with 3 down, at 80..100 and 190..200.
    expect(withoutQuorum(down, 5)).toEqual([
      { from: 80, to: 100 },
      { from: 190, to: 200 },
    ]);
    expect(withoutQuorum(down.slice(0, 2), 5)).toEqual([]);
  });
});
