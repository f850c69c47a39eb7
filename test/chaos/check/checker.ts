/**
 * The safety checker: no two holders' windows (check/holders.ts) may
 * intersect on any resource. Also checks what the history can say about the
 * algorithm's own rules: every grant had a quorum of `ok` node outcomes, and
 * fencing tokens (when the library hands them out) strictly increase from one
 * holder of a resource to the next.
 */
import type { History, OpRecord } from '../history/types.js';
import { type Holder, holdersOf } from './holders.js';

export interface Overlap {
  /** The resources both held (a multi-resource lock can share several). */
  readonly resources: readonly string[];
  /** The holder whose window started first. */
  readonly first: Holder;
  readonly second: Holder;
  /** How long both windows were open at once. */
  readonly overlapMs: number;
}

export interface TokenRegression {
  readonly resource: string;
  /** The earlier holder (by window start), whose token is not smaller than the later one's. */
  readonly earlier: Holder;
  readonly later: Holder;
}

export interface QuorumBreach {
  readonly op: OpRecord;
  readonly okNodes: number;
}

export interface CheckResult {
  readonly holders: readonly Holder[];
  readonly overlaps: readonly Overlap[];
  readonly tokenRegressions: readonly TokenRegression[];
  readonly quorumBreaches: readonly QuorumBreach[];
  /** Holders whose fencing token was checked (0 until the library hands tokens out). */
  readonly tokensChecked: number;
}

export function checkHistory(history: History): CheckResult {
  const holders = holdersOf(history);
  const byResource = new Map<string, Holder[]>();
  for (const holder of holders) {
    for (const resource of holder.resources) {
      const list = byResource.get(resource);
      if (list === undefined) byResource.set(resource, [holder]);
      else list.push(holder);
    }
  }
  let tokensChecked = 0;
  const tokenRegressions: TokenRegression[] = [];
  const overlapsByPair = new Map<string, { first: Holder; second: Holder; resources: string[]; overlapMs: number }>();
  for (const [resource, list] of byResource) {
    // holdersOf() sorted by start, so each list is too.
    const open = list.filter((h) => h.end > h.start);
    for (let i = 0; i < open.length; i++) {
      const a = open[i] as Holder;
      for (let j = i + 1; j < open.length; j++) {
        const b = open[j] as Holder;
        if (b.start >= a.end) break;
        const key = `${a.value}/${b.value}`;
        const overlapMs = Math.min(a.end, b.end) - b.start;
        const found = overlapsByPair.get(key);
        if (found === undefined) overlapsByPair.set(key, { first: a, second: b, resources: [resource], overlapMs });
        else found.resources.push(resource);
      }
    }
    // Holds only, as for overlaps: a holder whose acquire completed after its validity ended
    // (its process paused in between) held at no instant it saw, and its start (the completion)
    // would order it after holders that came later (seen in child-processes at load 6: a token
    // "going backwards" from a lock that had expired before its caller heard of it).
    const tokened = open.filter((h) => h.fencingTokens.has(resource));
    tokensChecked += tokened.length;
    for (let i = 1; i < tokened.length; i++) {
      const earlier = tokened[i - 1] as Holder;
      const later = tokened[i] as Holder;
      if ((later.fencingTokens.get(resource) as bigint) <= (earlier.fencingTokens.get(resource) as bigint)) {
        tokenRegressions.push({ resource, earlier, later });
      }
    }
  }
  const quorumBreaches: QuorumBreach[] = [];
  for (const op of history.ops) {
    if (op.result !== 'ok' || op.kind === 'release') continue;
    const okNodes = op.nodes.filter((n) => n.status === 'ok').length;
    if (okNodes < op.quorum) quorumBreaches.push({ op, okNodes });
  }
  return {
    holders,
    overlaps: [...overlapsByPair.values()],
    tokenRegressions,
    quorumBreaches,
    tokensChecked,
  };
}

/** True when the history shows no overlap, no token regression and no grant without a quorum. */
export function isSafe(result: CheckResult): boolean {
  return result.overlaps.length === 0 && result.tokenRegressions.length === 0 && result.quorumBreaches.length === 0;
}
