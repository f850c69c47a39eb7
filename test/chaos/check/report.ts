/**
 * Human-readable reports of what the checker found: both operations of an
 * overlap with their node outcomes and windows, and the faults active then.
 * Times are printed relative to the history's first invocation.
 */
import type { FaultRecord, History, NodeOutcomeRecord, OpRecord } from '../history/types.js';
import type { CheckResult, Overlap, QuorumBreach, TokenRegression } from './checker.js';
import type { Holder } from './holders.js';

/**
 * Enough of a lock value to tell holders apart: the start of its random part
 * (a value begins with its process's tag, the same for every lock of a process).
 */
export function shortValue(value: string): string {
  return `${value.slice(value.indexOf('.') + 1).slice(0, 8)}…`;
}

export function historyOrigin(history: History): number {
  let origin = Infinity;
  for (const op of history.ops) origin = Math.min(origin, op.invokedAt);
  for (const f of history.faults) origin = Math.min(origin, f.from);
  return Number.isFinite(origin) ? origin : 0;
}

/** Faults whose active interval intersects [from, to]. */
export function faultsBetween(faults: readonly FaultRecord[], from: number, to: number): FaultRecord[] {
  return faults.filter((f) => f.from <= to && f.to >= from);
}

export function formatOverlap(overlap: Overlap, history: History): string {
  const origin = historyOrigin(history);
  const { first, second } = overlap;
  const from = Math.min(first.acquire.invokedAt, second.acquire.invokedAt);
  const to = Math.max(first.end, second.end);
  const lines = [
    `OVERLAP on ${overlap.resources.map((r) => `"${r}"`).join(', ')}: both held for ${overlap.overlapMs.toFixed(1)} ms`,
    ...formatHolder('first ', first, origin),
    ...formatHolder('second', second, origin),
    `  faults active then: ${formatFaults(faultsBetween(history.faults, from, to), origin)}`,
  ];
  return lines.join('\n');
}

export function formatTokenRegression(regression: TokenRegression, history: History): string {
  const origin = historyOrigin(history);
  return [
    `FENCING TOKEN did not increase on "${regression.resource}": ${regression.earlier.fencingTokens.get(regression.resource)} then ${regression.later.fencingTokens.get(regression.resource)}`,
    ...formatHolder('earlier', regression.earlier, origin),
    ...formatHolder('later  ', regression.later, origin),
  ].join('\n');
}

export function formatQuorumBreach(breach: QuorumBreach, history: History): string {
  const origin = historyOrigin(history);
  return `GRANT WITHOUT QUORUM: ${breach.okNodes} ok, quorum ${breach.op.quorum}: ${formatOp(breach.op, origin)}`;
}

/** Every finding of a check, or '' when there is none. */
export function formatFindings(result: CheckResult, history: History, limit = 5): string {
  const parts = [
    ...result.overlaps.slice(0, limit).map((o) => formatOverlap(o, history)),
    ...result.tokenRegressions.slice(0, limit).map((t) => formatTokenRegression(t, history)),
    ...result.quorumBreaches.slice(0, limit).map((q) => formatQuorumBreach(q, history)),
  ];
  const total = result.overlaps.length + result.tokenRegressions.length + result.quorumBreaches.length;
  if (total > parts.length) parts.push(`... and ${total - parts.length} more`);
  return parts.join('\n\n');
}

function formatHolder(label: string, holder: Holder, origin: number): string[] {
  const released =
    holder.release === undefined ? 'never released' : `release invoked ${at(holder.release.invokedAt, origin)}`;
  const token =
    holder.fencingTokens.size === 0 ? '' : `, fencing tokens ${[...holder.fencingTokens].map(([r, t]) => `${r}=${t}`).join(' ')}`;
  const reentered = holder.reentries === 0 ? '' : `, ${holder.reentries} re-entered hold(s) counted in`;
  return [
    `  ${label} holder ${holder.client}, value ${shortValue(holder.value)}: window [${at(holder.start, origin)}, ${at(holder.end, origin)}]` +
      ` (validUntil ${at(holder.validUntil, origin)}, ${released}${token}${reentered})`,
    `    ${formatOp(holder.acquire, origin)}`,
    ...holder.extends.map((op) => `    ${formatOp(op, origin)}`),
  ];
}

function formatOp(op: OpRecord, origin: number): string {
  const valid = op.validUntil === undefined ? '' : ` validUntil ${at(op.validUntil, origin)}`;
  return `${op.id} ${op.kind} [${op.resources.join(', ')}] ttl ${op.ttlMs ?? '-'} invoked ${at(op.invokedAt, origin)} completed ${at(op.completedAt, origin)} → ${op.result}${valid}; nodes: ${formatNodes(op.nodes)}`;
}

function formatNodes(nodes: readonly NodeOutcomeRecord[]): string {
  if (nodes.length === 0) return '(none recorded)';
  return nodes.map((n) => `${n.node} ${n.status} ${n.ms.toFixed(1)}ms`).join(', ');
}

function formatFaults(faults: readonly FaultRecord[], origin: number): string {
  if (faults.length === 0) return 'none';
  return faults
    .map((f) => `${f.kind} ${f.target}${f.detail === undefined ? '' : ` (${f.detail})`} [${at(f.from, origin)}, ${at(f.to, origin)}]`)
    .join('; ');
}

function at(time: number, origin: number): string {
  return `+${(time - origin).toFixed(1)}`;
}
