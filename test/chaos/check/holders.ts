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

  const holders: Holder[] = [];
  for (const [value, ops] of byValue) {
    const grants = ops.filter((op) => op.kind === 'acquire' && op.result === 'ok').sort(byInvoke);
    const acquire = grants[0];
    if (acquire === undefined) continue;
    const extendsGranted = ops.filter((op) => op.kind === 'extend' && op.result === 'ok').sort(byInvoke);
    const release = ops.filter((op) => op.kind === 'release').sort(byInvoke)[0];
    let validUntil = -Infinity;
    for (const op of [...grants, ...extendsGranted]) validUntil = Math.max(validUntil, op.validUntil ?? -Infinity);
    const end = release === undefined ? validUntil : Math.min(validUntil, release.invokedAt);
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
    });
  }
  return holders.sort((a, b) => a.start - b.start);
}

function byInvoke(a: OpRecord, b: OpRecord): number {
  return a.invokedAt - b.invokedAt;
}
