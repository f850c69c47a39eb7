/**
 * What the children's reports say, put on one timeline: throughput, waits,
 * the hold the timer really gave, fairness while everyone still wanted the
 * lock, and overlapping holds across all processes (must be none).
 */
import type { Sample } from '../metrics.js';
import { jainIndex, quantile } from '../stats.js';
import { totalWaiters, type ProcsShape } from '../scenarios/procs.js';
import type { SectionRecord, WorkerReport } from './protocol.js';

export interface ProcsCounts {
  /** Requests sent by all children between go and their ends. */
  readonly requests: number;
  /** Commands the servers executed over the same time (INFO commandstats deltas, all nodes). */
  readonly commands: number;
  readonly nodes: number;
}

export interface ProcsAnalysis {
  readonly sample: Sample;
  /** Critical sections done in all. */
  readonly sections: number;
  readonly meanHoldMs: number;
  /** All waiters × the mean hold: the last in line's wait under a perfectly fair lock with free handoffs. */
  readonly fifoIdealMs: number;
}

interface Placed extends SectionRecord {
  readonly proc: number;
}

/** `reports`: one per child that reported (a child that crashed or hung has none). */
export function analyse(shape: ProcsShape, reports: readonly WorkerReport[], counts: ProcsCounts): ProcsAnalysis {
  const sections: Placed[] = reports.flatMap((report) => report.sections.map((section) => ({ ...section, proc: report.proc })));
  const goAt = Math.min(...reports.map((report) => report.goAt).filter(Number.isFinite));
  const endAt = Math.max(...reports.map((report) => report.endAt));
  const elapsedMs = endAt - goAt;

  const holds = sections.map((section) => section.end - section.start);
  const meanHoldMs = holds.reduce((sum, hold) => sum + hold, 0) / holds.length;
  // Waits still going on at the end count with the time waited so far: a
  // lower bound, but leaving them out would hide the starved.
  const waits = [
    ...sections.map((section) => section.start - section.wantAt),
    ...reports.flatMap((report) => report.waitingSince.map((since) => report.endAt - since)),
  ];
  const waitP99Ms = quantile(waits, 0.99);
  const fifoIdealMs = totalWaiters(shape) * meanHoldMs;
  const { perWaiter, perProc } = sharesWhileAllWant(shape, reports, sections);
  const done = sections.length;
  // The shared timeline, in start order: what overlaps() and gaps() both walk.
  const byStart = [...sections].sort((a, b) => a.start - b.start);

  return {
    sample: {
      cyclesPerSec: (done / elapsedMs) * 1000,
      holdCapPerSec: 1000 / meanHoldMs,
      waitP50Ms: quantile(waits, 0.5),
      waitP99Ms,
      fifoRatio: waitP99Ms / fifoIdealMs,
      reqsPerCycle: counts.requests / done,
      cmdsPerCycle: counts.commands / done,
      reqsPerCycleNode: counts.requests / done / counts.nodes,
      cmdsPerCycleNode: counts.commands / done / counts.nodes,
      jainProcs: jainIndex(perProc),
      jainWaiters: jainIndex(perWaiter),
      giveUps: reports.reduce((sum, report) => sum + report.giveUps, 0),
      errors: reports.reduce((sum, report) => sum + report.errors, 0),
      overlaps: overlaps(byStart),
      ...gaps(byStart),
    },
    sections: done,
    meanHoldMs,
    fifoIdealMs,
  };
}

/**
 * Critical sections per waiter and per process that began before the first
 * waiter had all of its own. Up to then every waiter wanted the lock, so a
 * fair lock shares it evenly; counted to the end, every waiter gets exactly
 * K and every index is 1 whatever the order was.
 */
function sharesWhileAllWant(
  shape: ProcsShape,
  reports: readonly WorkerReport[],
  sections: readonly Placed[],
): { perWaiter: number[]; perProc: number[] } {
  const byWaiter = new Map<string, Placed[]>();
  for (const section of sections) {
    const id = `${section.proc}:${section.waiter}`;
    const list = byWaiter.get(id) ?? [];
    list.push(section);
    byWaiter.set(id, list);
  }
  const lastEnds = [...byWaiter.values()]
    .filter((list) => list.length >= shape.sections)
    .map((list) => Math.max(...list.map((section) => section.end)));
  const until = lastEnds.length > 0 ? Math.min(...lastEnds) : Math.max(...reports.map((report) => report.endAt));

  const perWaiter: number[] = [];
  const perProc: number[] = [];
  for (const report of reports) {
    let inProc = 0;
    for (let waiter = 0; waiter < shape.waiters; waiter++) {
      const got = (byWaiter.get(`${report.proc}:${waiter}`) ?? []).filter((section) => section.start < until).length;
      perWaiter.push(got);
      inProc += got;
    }
    perProc.push(inProc);
  }
  return { perWaiter, perProc };
}

/**
 * Where the time between sections goes: from each section's end to the next
 * one's start (in start order), within a process (a pass) and across
 * processes (a handoff), and how many moves were handoffs.
 */
type Gaps = Pick<Sample, 'passGapMs' | 'handoffGapMs' | 'handoffShare'>;

function gaps(byStart: readonly Placed[]): Gaps {
  const passes: number[] = [];
  const handoffs: number[] = [];
  for (let i = 1; i < byStart.length; i++) {
    const before = byStart[i - 1] as Placed;
    const after = byStart[i] as Placed;
    (after.proc === before.proc ? passes : handoffs).push(after.start - before.end);
  }
  const mean = (values: readonly number[]) => (values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length);
  const moves = passes.length + handoffs.length;
  const result: Gaps = {};
  const passGapMs = mean(passes);
  const handoffGapMs = mean(handoffs);
  if (passGapMs !== undefined) result.passGapMs = passGapMs;
  if (handoffGapMs !== undefined) result.handoffGapMs = handoffGapMs;
  if (moves > 0) result.handoffShare = (100 * handoffs.length) / moves;
  return result;
}

/** Sections (in start order) that began before an earlier one ended, wherever the two ran. */
function overlaps(byStart: readonly Placed[]): number {
  let count = 0;
  let latestEnd = Number.NEGATIVE_INFINITY;
  for (const section of byStart) {
    if (section.start < latestEnd) count++;
    latestEnd = Math.max(latestEnd, section.end);
  }
  return count;
}
