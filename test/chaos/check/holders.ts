/**
 * Turns a history into holders: who held which resources, over which window.
 *
 * The window is what the holder may believe it holds, and is conservatively
 * wide on both ends without ever exceeding what Redlock promises:
 *   start = completion of the granted acquire round (no caller can act on the
 *           lock earlier; the round's invoke time would be wider than any
 *           belief and flag overlaps with the previous holder's release);
 *   end   = the largest validUntil of the granted acquire and every granted
 *           extend (extends move it), cut short by the first release's invoke
 *           time (from then on the holder has let go).
 * A lock lost or expired needs no special case: its window still ends at
 * validUntil, which the holder's clock bounds whatever the nodes did.
 * A re-entered hold (history.reentries) is part of its outer hold: it
 * carries the same value and believes it holds the same keys, so the window
 * lasts until the last of them lets go too. (A re-entry by value that
 * outlives its owner's release is a second holder once another takes the
 * lock: the owner's window covers it, and the overlap shows.)
 */
import type { History, OpRecord } from '../history/types.js';

export interface Holder {
  readonly value: string;
  readonly client: string;
  readonly resources: readonly string[];
  /** The granted acquire round. */
  readonly acquire: OpRecord;
  /** Granted extends, in order. */
  readonly extends: readonly OpRecord[];
  /** The first release round, if any. */
  readonly release: OpRecord | undefined;
  readonly start: number;
  /** Largest validUntil granted (acquire or extend). */
  readonly validUntil: number;
  readonly end: number;
  /** Fencing token per resource, when the locker handed them out. */
  readonly fencingTokens: ReadonlyMap<string, bigint>;
  /** Holds re-entered on this one (nested or by value). */
  readonly reentries: number;
}

export function holdersOf(history: History): Holder[] {
  const byValue = new Map<string, OpRecord[]>();
  for (const op of history.ops) {
    const list = byValue.get(op.value);
    if (list === undefined) byValue.set(op.value, [op]);
    else list.push(op);
  }
  const handedTokens = new Map<string, readonly string[]>();
  for (const h of history.handovers) if (h.fencingTokens !== undefined) handedTokens.set(h.value, h.fencingTokens);

  const reentered = new Map<string, { count: number; until: number }>();
  for (const r of history.reentries ?? []) {
    const found = reentered.get(r.value);
    if (found === undefined) reentered.set(r.value, { count: 1, until: r.to });
    else {
      found.count += 1;
      found.until = Math.max(found.until, r.to);
    }
  }

  const holders: Holder[] = [];
  for (const [value, ops] of byValue) {
    const grants = ops.filter((op) => op.kind === 'acquire' && op.result === 'ok').sort(byInvoke);
    const acquire = grants[0];
    if (acquire === undefined) continue;
    const extendsGranted = ops.filter((op) => op.kind === 'extend' && op.result === 'ok').sort(byInvoke);
    const release = ops.filter((op) => op.kind === 'release').sort(byInvoke)[0];
    let validUntil = -Infinity;
    for (const op of [...grants, ...extendsGranted]) validUntil = Math.max(validUntil, op.validUntil ?? -Infinity);
    const reentries = reentered.get(value);
    const ownEnd = release === undefined ? validUntil : Math.min(validUntil, release.invokedAt);
    const end = Math.max(ownEnd, reentries?.until ?? -Infinity);
    const tokens = acquire.fencingTokens ?? handedTokens.get(value) ?? [];
    holders.push({
      value,
      client: acquire.client,
      resources: acquire.resources,
      acquire,
      extends: extendsGranted,
      release,
      start: acquire.completedAt,
      validUntil,
      end,
      fencingTokens: new Map(tokens.map((token, i) => [acquire.resources[i] ?? '', BigInt(token)])),
      reentries: reentries?.count ?? 0,
    });
  }
  return holders.sort((a, b) => a.start - b.start);
}

function byInvoke(a: OpRecord, b: OpRecord): number {
  return a.invokedAt - b.invokedAt;
}
