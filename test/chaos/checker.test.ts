import { describe, expect, it } from 'vitest';
import { checkHistory, isSafe } from './check/checker.js';
import { formatHoldOverlap, overlappingHolds } from './check/holds.js';
import { formatFindings, formatOverlap } from './check/report.js';
import type { FaultRecord, HandoverRecord, History, HoldRecord, OpRecord } from './history/types.js';

let seq = 0;
const FIVE_OK = ['n0', 'n1', 'n2', 'n3', 'n4'].map((node) => ({ node, status: 'ok' as const, ms: 1 }));

/** A granted acquire of `resources` by `client`, completed at `start`, valid until `until`. */
function grant(value: string, resources: string[], start: number, until: number, extra: Partial<OpRecord> = {}): OpRecord {
  return op({ kind: 'acquire', value, resources, invokedAt: start - 2, completedAt: start, validUntil: until, ...extra });
}

function op(fields: Partial<OpRecord> & Pick<OpRecord, 'kind' | 'value'>): OpRecord {
  seq += 1;
  return {
    id: `c#${seq}`,
    client: 'c',
    resources: ['r'],
    quorum: 3,
    invokedAt: 0,
    completedAt: 0,
    result: 'ok',
    nodes: FIVE_OK,
    ...fields,
  };
}

function history(ops: OpRecord[], faults: FaultRecord[] = [], handovers: HandoverRecord[] = []): History {
  return { ops, faults, handovers };
}

describe('chaos history checker', () => {
  it('accepts holders whose windows follow each other', () => {
    const result = checkHistory(history([grant('a', ['r'], 10, 100), grant('b', ['r'], 100, 200), grant('c', ['r'], 250, 300)]));
    expect(result.holders).toHaveLength(3);
    expect(result.overlaps).toEqual([]);
    expect(isSafe(result)).toBe(true);
  });

  describe('re-entered holds', () => {
    const reentry = (value: string, from: number, to: number, byValue: boolean) => ({ client: 'p', value, resources: ['r'], byValue, from, to });
    const ownerThenNext = (): OpRecord[] => [
      grant('owner', ['r'], 10, 1_000),
      op({ kind: 'release', value: 'owner', invokedAt: 100, completedAt: 102 }),
      grant('next', ['r'], 150, 400),
    ];

    it('count as part of their outer hold: nested and by-value holds inside it overlap nobody', () => {
      const result = checkHistory({ ...history(ownerThenNext()), reentries: [reentry('owner', 20, 60, false), reentry('owner', 30, 90, true)] });
      expect(result.overlaps).toEqual([]);
      expect(result.holders.find((h) => h.value === 'owner')?.reentries).toBe(2);
    });

    it("extend the outer hold: a re-entry by value still open after the owner's release overlaps the next holder", () => {
      const result = checkHistory({ ...history(ownerThenNext()), reentries: [reentry('owner', 30, 200, true)] });
      expect(result.overlaps).toHaveLength(1);
      expect(result.overlaps[0]?.first.value).toBe('owner');
      expect(result.overlaps[0]?.second.value).toBe('next');
      expect(result.overlaps[0]?.overlapMs).toBe(50);
    });
  });

  it('reports two holders whose windows intersect on one resource, with both operations and the faults then', () => {
    const a = grant('aaaaaaaaaa', ['r'], 10, 100, { client: 'c0' });
    const b = grant('bbbbbbbbbb', ['r'], 60, 150, { client: 'c1' });
    const fault: FaultRecord = { id: 1, kind: 'restart-empty', target: 'n1', from: 30, to: 40 };
    const unrelated: FaultRecord = { id: 2, kind: 'SIGSTOP', target: 'n4', from: 500, to: 600 };
    const h = history([a, b], [fault, unrelated]);
    const result = checkHistory(h);
    expect(result.overlaps).toHaveLength(1);
    const [overlap] = result.overlaps;
    expect(overlap?.first.value).toBe('aaaaaaaaaa');
    expect(overlap?.second.value).toBe('bbbbbbbbbb');
    expect(overlap?.overlapMs).toBe(40);
    const text = formatOverlap(overlap!, h);
    expect(text).toContain(a.id);
    expect(text).toContain(b.id);
    expect(text).toContain('restart-empty n1');
    expect(text).not.toContain('SIGSTOP');
    expect(isSafe(result)).toBe(false);
  });

  it('starts a window when the acquire completed, not when it was invoked', () => {
    const a = grant('a', ['r'], 10, 100);
    const b = op({ kind: 'acquire', value: 'b', invokedAt: 50, completedAt: 100, validUntil: 180 });
    expect(checkHistory(history([a, b])).overlaps).toEqual([]);
  });

  it('ends a window at the release invocation when that comes before validUntil', () => {
    const a = grant('a', ['r'], 10, 100);
    const release = op({ kind: 'release', value: 'a', invokedAt: 50, completedAt: 52, released: 5 });
    expect(checkHistory(history([a, release, grant('b', ['r'], 55, 150)])).overlaps).toEqual([]);
    expect(checkHistory(history([a, release, grant('b', ['r'], 45, 150)])).overlaps).toHaveLength(1);
  });

  it('moves the end of a window with every granted extend, and ignores refused ones', () => {
    const a = grant('a', ['r'], 10, 100);
    const b = grant('b', ['r'], 150, 250);
    const extended = op({ kind: 'extend', value: 'a', invokedAt: 80, completedAt: 82, validUntil: 180 });
    const refused = op({ kind: 'extend', value: 'a', invokedAt: 80, completedAt: 82, result: 'lost', nodes: [] });
    expect(checkHistory(history([a, b, refused])).overlaps).toEqual([]);
    const result = checkHistory(history([a, b, extended]));
    expect(result.overlaps).toHaveLength(1);
    expect(result.overlaps[0]?.first.validUntil).toBe(180);
  });

  it('does not count failed acquires as holders', () => {
    const a = grant('a', ['r'], 10, 100);
    const held = op({ kind: 'acquire', value: 'b', invokedAt: 20, completedAt: 30, result: 'held', errorCode: 'QUORUMLOCK_LOCK_HELD' });
    const exhausted = op({ kind: 'acquire', value: 'c', invokedAt: 20, completedAt: 30, result: 'exhausted' });
    const result = checkHistory(history([a, held, exhausted]));
    expect(result.holders.map((h) => h.value)).toEqual(['a']);
    expect(result.overlaps).toEqual([]);
  });

  it('keeps resources apart, but a multi-resource lock conflicts with a holder of any of its resources', () => {
    const a = grant('a', ['x'], 10, 100);
    const b = grant('b', ['y'], 20, 100);
    expect(checkHistory(history([a, b])).overlaps).toEqual([]);
    const both = grant('ab', ['x', 'y'], 50, 120);
    const result = checkHistory(history([a, b, both]));
    expect(result.overlaps.map((o) => [o.first.value, o.second.value, o.resources])).toEqual([
      ['a', 'ab', ['x']],
      ['b', 'ab', ['y']],
    ]);
  });

  it('ignores a window that closed before it opened (validity used up on the way back)', () => {
    const a = grant('a', ['r'], 10, 100);
    const empty = grant('b', ['r'], 50, 40);
    expect(checkHistory(history([a, empty])).overlaps).toEqual([]);
  });

  it('reports a grant whose recorded node outcomes hold no quorum', () => {
    const twoOk = grant('a', ['r'], 10, 100, { nodes: FIVE_OK.slice(0, 2) });
    const result = checkHistory(history([twoOk]));
    expect(result.quorumBreaches).toHaveLength(1);
    expect(formatFindings(result, history([twoOk]))).toContain('GRANT WITHOUT QUORUM: 2 ok, quorum 3');
  });

  describe('fencing tokens', () => {
    it('is a no-op while the library hands out no tokens', () => {
      const result = checkHistory(history([grant('a', ['r'], 10, 100), grant('b', ['r'], 100, 200)]));
      expect(result.tokensChecked).toBe(0);
      expect(result.tokenRegressions).toEqual([]);
    });

    it('accepts tokens that strictly increase from one holder of a resource to the next', () => {
      const ops = [grant('a', ['r'], 10, 100, { fencingTokens: ['7'] }), grant('b', ['r'], 100, 200, { fencingTokens: ['9'] })];
      const result = checkHistory(history(ops));
      expect(result.tokensChecked).toBe(2);
      expect(isSafe(result)).toBe(true);
    });

    it('reports a token that does not increase, also when it reached the holder only at handover', () => {
      const ops = [grant('a', ['r'], 10, 100, { fencingTokens: ['12'] }), grant('b', ['r'], 100, 200)];
      const handovers: HandoverRecord[] = [{ client: 'c', value: 'b', at: 101, fencingTokens: ['12'] }];
      const h = history(ops, [], handovers);
      const result = checkHistory(h);
      expect(result.tokenRegressions).toHaveLength(1);
      expect(result.tokenRegressions[0]?.resource).toBe('r');
      expect(formatFindings(result, h)).toContain('FENCING TOKEN did not increase on "r": 12 then 12');
    });

    it('does not order a lock whose acquire completed after its validity ended (held at no instant) by that completion', () => {
      // a: token 5, valid until 100, but its caller heard of it only at 150 (a paused process); b then held from 120.
      const ops = [
        op({ kind: 'acquire', value: 'a', resources: ['r'], invokedAt: 10, completedAt: 150, validUntil: 100, fencingTokens: ['5'] }),
        grant('b', ['r'], 120, 200, { fencingTokens: ['9'] }),
      ];
      expect(checkHistory(history(ops)).tokenRegressions).toEqual([]);
      // A lock that did hold does count: the same tokens the other way round regress.
      const held = [grant('a', ['r'], 130, 140, { fencingTokens: ['9'] }), grant('b', ['r'], 150, 200, { fencingTokens: ['5'] })];
      expect(checkHistory(history(held)).tokenRegressions).toHaveLength(1);
    });

    it("takes each resource's own token from a multi-resource lock", () => {
      const ops = [
        grant('a', ['x', 'y'], 10, 100, { fencingTokens: ['4', '40'] }),
        grant('b', ['y'], 100, 200, { fencingTokens: ['41'] }),
        grant('c', ['x'], 200, 300, { fencingTokens: ['4'] }),
      ];
      const result = checkHistory(history(ops));
      expect(result.tokensChecked).toBe(4);
      expect(result.tokenRegressions.map((r) => [r.resource, r.earlier.value, r.later.value])).toEqual([['x', 'a', 'c']]);
    });

    it('compares tokens per resource, not across resources', () => {
      const ops = [grant('a', ['x'], 10, 100, { fencingTokens: ['5'] }), grant('b', ['y'], 100, 200, { fencingTokens: ['1'] })];
      expect(checkHistory(history(ops)).tokenRegressions).toEqual([]);
    });
  });

  describe('caller holds', () => {
    const hold = (id: string, value: string, from: number, to: number): HoldRecord => ({
      id,
      client: 'w0.c0',
      process: 'w0',
      value,
      resources: ['r'],
      from,
      to,
      end: 'released',
    });

    it('accepts callers of one lock value that follow each other (a lock handed on in-process)', () => {
      expect(overlappingHolds([hold('a~1', 'v', 10, 50), hold('b~1', 'v', 50, 90), hold('c~1', 'w', 95, 120)])).toEqual([]);
    });

    it('reports two callers holding at once, even with the same lock value, which the value-level check cannot see', () => {
      const holds = [hold('a~1', 'v', 10, 60), hold('b~1', 'v', 50, 90)];
      const [overlap, ...rest] = overlappingHolds(holds);
      expect(rest).toEqual([]);
      expect(overlap?.overlapMs).toBe(10);
      expect(formatHoldOverlap(overlap!, 0)).toContain('CALLER OVERLAP on "r" for 10.0 ms: a~1');
      const ops = [grant('v', ['r'], 10, 100)];
      expect(checkHistory(history(ops)).overlaps).toEqual([]);
    });
  });
});
