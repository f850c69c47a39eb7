/**
 * The liveness figure of a wait-line history: the longest time a resource sat
 * free while a live waiter wanted it.
 *
 * Precisely, on one resource and within the measured run:
 *
 * - **occupied** while a holder's window is open (check/holders.ts: from the
 *   granted acquire's completion to its release's invocation or validUntil).
 *   A holder that let its validity run out without releasing (its process
 *   was killed or SIGSTOPped mid-hold) keeps it occupied until its keys can
 *   have expired: the latest completion of any of its acquire or extend
 *   rounds plus their TTL (a reply left the node after the node set the TTL).
 *   That is "not counting the TTL of a holder that died": nothing but the TTL
 *   can free those keys. A release invoked late ends it at the release's
 *   completion, if that comes first.
 * - **wanted** while an acquire() call is outstanding (WantRecord) and its
 *   process was neither killed nor SIGSTOPped (`outages`).
 * - **live** while wanted by a process that could run: not stalled
 *   (`stalls`: its event loop did not run for a while on a busy machine), and
 *   not during a `standstill` (the process carrying every request could not
 *   run).
 * - **excluded** during `excluded` windows (node faults and their settling,
 *   chosen by the scenario): those stretches are reported by a separate call
 *   with other exclusions, never mixed into this figure.
 *
 * A *stretch* is a maximal interval that is wanted, not occupied and not
 * excluded. Its measured length is its live time, counted from its start or
 * from the last waiter loss (a process with an outstanding want killed or
 * SIGSTOPped) before its end, whichever is later: the design's bound (lease
 * + one backoff delay) runs from the moment a waiter stops keeping its place,
 * and a loss during a stretch is exactly what restarts it (a dead head blocks
 * the line until its lease passes). A stall is not a loss: the stalled
 * waiters keep their places, and the line goes on where it was once they
 * run. So a stall takes its time out of the stretch but does not end it (on
 * a busy machine every waiter's process misses a tick now and then: were a
 * stall to split a stretch, no stretch could outgrow the gap between two such
 * moments, and a resource left free for seconds would measure as short
 * pieces). The figure is the longest measured stretch. Reservations handed to dead waiters are deliberately *not*
 * occupied: the time they block the line is what the bound is about.
 */
import type { History, WantRecord } from '../history/types.js';
import { type Holder, holdersOf } from './holders.js';

export interface Interval {
  readonly from: number;
  readonly to: number;
}

/** A process that could not act: SIGSTOPped (from..to) or killed (to: Infinity). */
export interface ProcessOutage extends Interval {
  readonly process: string;
}

export interface LivenessOptions {
  readonly resource: string;
  /** The measured run: stretches are cut to it. */
  readonly run: Interval;
  readonly outages: readonly ProcessOutage[];
  /**
   * Times a process could not run though nobody stopped it (descheduled on a
   * busy machine): its waiters are not live then, but it was not lost either
   * (no restart of the measurement).
   */
  readonly stalls?: readonly ProcessOutage[];
  /**
   * Times nothing could move, whoever waited (the process that carries every
   * locker's requests was descheduled): taken out of a stretch like a stall.
   */
  readonly standstills?: readonly Interval[];
  readonly excluded: readonly Interval[];
}

export interface Stretch extends Interval {
  /** Where the measured part begins: `from`, or the last waiter loss before `to`. */
  readonly measuredFrom: number;
  /** Live time from `measuredFrom` to `to`. */
  readonly measuredMs: number;
  /** Time from `measuredFrom` to `to` in which no waiter was live (stalls, standstills). */
  readonly notLiveMs: number;
  /** The loss that restarted the measurement, if any. */
  readonly after?: ProcessOutage;
}

export interface LivenessResult {
  /** The longest measured stretch, 0 when the resource never sat free while wanted. */
  readonly longestMs: number;
  readonly longest: Stretch | undefined;
  readonly stretches: number;
  /** Time the measurement covered: the run minus the exclusions. */
  readonly coveredMs: number;
  /** Waiter losses seen (each restarts the measurement of its stretch). */
  readonly losses: number;
}

export function measureLiveness(history: History, options: LivenessOptions): LivenessResult {
  const { resource, run } = options;
  const holders = holdersOf(history).filter((h) => h.resources.includes(resource));
  const occupied = merge(holders.map((h) => ({ from: h.start, to: occupiedUntil(h, history) })));
  const wants = (history.wants ?? []).filter((w) => w.resources.includes(resource));
  const wanted = merge(wants.flatMap((w) => subtract([{ from: w.from, to: w.to }], outagesOf(w.process, options.outages))));
  const cannotRun = [...options.outages, ...(options.stalls ?? [])];
  const live = merge(wants.flatMap((w) => subtract([{ from: w.from, to: w.to }], outagesOf(w.process, cannotRun))));
  const notLive = merge([...subtract(wanted, live), ...(options.standstills ?? [])]);
  const excluded = merge(options.excluded);
  const candidates = subtract(intersect(wanted, [run]), [...occupied, ...excluded]).filter((s) => s.to > s.from);
  const losses = waiterLosses(wants, options.outages);

  let longest: Stretch | undefined;
  for (const { from, to } of candidates) {
    let after: ProcessOutage | undefined;
    for (const loss of losses) {
      if (loss.from > to) break;
      after = loss;
    }
    const measuredFrom = after !== undefined && after.from > from ? after.from : from;
    const measuredMs = lengthOf(subtract([{ from: measuredFrom, to }], notLive));
    const notLiveMs = to - measuredFrom - measuredMs;
    const stretch: Stretch = { from, to, measuredFrom, measuredMs, notLiveMs, ...(measuredFrom > from && after ? { after } : {}) };
    if (longest === undefined || stretch.measuredMs > longest.measuredMs) longest = stretch;
  }
  const coveredMs = lengthOf(subtract([run], excluded));
  return { longestMs: longest?.measuredMs ?? 0, longest, stretches: candidates.length, coveredMs, losses: losses.length };
}

/**
 * Until when a holder keeps the resource occupied: its window, and past it,
 * for a holder that did not let go in time, until its keys can have expired.
 */
export function occupiedUntil(holder: Holder, history: History): number {
  const released = holder.release !== undefined && holder.release.invokedAt <= holder.validUntil;
  if (released) return holder.end;
  let keysExpire = holder.end;
  for (const op of history.ops) {
    if (op.value !== holder.value || op.ttlMs === undefined) continue;
    if ((op.kind === 'acquire' && op.result === 'ok') || op.kind === 'extend') keysExpire = Math.max(keysExpire, op.completedAt + op.ttlMs);
  }
  return holder.release === undefined ? keysExpire : Math.max(holder.end, Math.min(keysExpire, holder.release.completedAt));
}

/** Outages of processes that had an outstanding want when they began, in time order. */
function waiterLosses(wants: readonly WantRecord[], outages: readonly ProcessOutage[]): ProcessOutage[] {
  return outages
    .filter((o) => wants.some((w) => w.process === o.process && w.from <= o.from && o.from <= w.to))
    .sort((a, b) => a.from - b.from);
}

function lengthOf(intervals: readonly Interval[]): number {
  return intervals.reduce((sum, i) => sum + Math.max(0, i.to - i.from), 0);
}

function outagesOf(process: string, outages: readonly ProcessOutage[]): Interval[] {
  return outages.filter((o) => o.process === process);
}

/** Sorted, disjoint, touching intervals joined. */
export function merge(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.to > i.from).sort((a, b) => a.from - b.from);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && i.from <= last.to) out[out.length - 1] = { from: last.from, to: Math.max(last.to, i.to) };
    else out.push({ from: i.from, to: i.to });
  }
  return out;
}

/** `base` minus every interval of `cut`. */
export function subtract(base: readonly Interval[], cut: readonly Interval[]): Interval[] {
  const holes = merge(cut);
  const out: Interval[] = [];
  for (const b of merge(base)) {
    let from = b.from;
    for (const h of holes) {
      if (h.to <= from) continue;
      if (h.from >= b.to) break;
      if (h.from > from) out.push({ from, to: h.from });
      from = Math.max(from, h.to);
      if (from >= b.to) break;
    }
    if (from < b.to) out.push({ from, to: b.to });
  }
  return out;
}

function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const x of merge(a)) {
    for (const y of merge(b)) {
      const from = Math.max(x.from, y.from);
      const to = Math.min(x.to, y.to);
      if (to > from) out.push({ from, to });
    }
  }
  return out;
}

/** From the windows in which single nodes were down or stopped: those in which fewer than a quorum of `nodes` were up. */
export function withoutQuorum(windows: readonly Interval[], nodes: number): Interval[] {
  const quorum = Math.floor(nodes / 2) + 1;
  const edges = windows.flatMap((w) => [
    { at: w.from, delta: 1 },
    { at: w.to, delta: -1 },
  ]);
  // At equal times, ends first: a node back up at the instant another goes down never counts twice.
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const out: Interval[] = [];
  let down = 0;
  let since = 0;
  for (const edge of edges) {
    const before = down;
    down += edge.delta;
    if (before <= nodes - quorum && down > nodes - quorum) since = edge.at;
    if (before > nodes - quorum && down <= nodes - quorum) out.push({ from: since, to: edge.at });
  }
  return merge(out);
}
