/** The lines under a procs table: what the numbers are measured against, and what to doubt. */
import type { ProcsPlan } from '../plan.js';
import { formatMetric } from '../report/format.js';
import { contenderLabel } from '../report/table.js';
import type { ContenderResult } from '../results.js';
import { totalWaiters } from '../scenarios/procs.js';

export interface TimeBaseSummary {
  readonly largestOffsetMs: number;
  readonly uncertaintyMs: number;
}

export function procsFootnotes(plan: ProcsPlan, contenders: readonly ContenderResult[], timeBase: TimeBaseSummary): string[] {
  const waiters = totalWaiters(plan.shape);
  const lines: string[] = [];
  const fifo = fifoLine(waiters, contenders.find((c) => c.role === 'ours'));
  if (fifo !== undefined) lines.push(fifo);
  lines.push(
    `Jain procs / waiters: critical sections per process / per waiter that began before the first waiter had all ${plan.shape.sections} of its own (until then all ${waiters} wanted the lock)`,
  );
  for (const c of contenders) {
    if (c.unfinished === undefined) continue;
    const rounds = c.notes.filter((note) => note.includes(' critical sections done'));
    lines.push(
      `${contenderLabel(c)}: ${rounds.join('; ').replace(/^round 1: /, '')}; its numbers cover the sections done (waits still going on count as waited so far)`,
    );
  }
  // Overlaps are judged on one timeline only as far as the processes' time bases are known.
  const known = `known to ±${timeBase.uncertaintyMs.toFixed(3)} ms`;
  lines.push(
    `overlaps: every process's records were moved onto the parent's time base (measured by IPC pings; ` +
      (timeBase.largestOffsetMs === 0
        ? `every process's base agreed with the parent's within what the pings could tell, ${known})`
        : `offsets up to ${timeBase.largestOffsetMs.toFixed(3)} ms, ${known})`),
  );
  return lines;
}

/** The wait a perfectly fair lock with free handoffs would give the last in line, and quorumlock's p99 against it. */
function fifoLine(waiters: number, ours: ContenderResult | undefined): string | undefined {
  const holdCap = ours?.median.holdCapPerSec;
  if (ours === undefined || holdCap === undefined || !Number.isFinite(holdCap)) return undefined;
  const meanHoldMs = 1000 / holdCap;
  const idealMs = waiters * meanHoldMs;
  const p99 = ours.median.waitP99Ms ?? Number.NaN;
  return (
    `FIFO ideal wait p99 = ${waiters} waiters × ${meanHoldMs.toFixed(2)} ms mean hold = ${idealMs.toFixed(1)} ms; ` +
    `${contenderLabel(ours)} wait p99 ${formatMetric('waitP99Ms', p99)} ms = ${(p99 / idealMs).toFixed(2)}× it`
  );
}
