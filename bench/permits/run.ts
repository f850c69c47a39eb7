/**
 * `npm run bench`'s permits scenario: the semaphore and the read-write lock
 * across processes. 8 worker processes (semaphore/worker.ts) of 8 waiters
 * each, all contenders in the same processes, taking turns round by round in
 * alternating order; 1 ms holds, a semaphore of limit 4.
 * - semaphore: quorumlock's beside redis-semaphore's `Semaphore` (1 node) or
 *   `RedlockSemaphore`;
 * - read-write lock: 7 readers and 1 writer per process, beside quorumlock's
 *   mutex taking every section alone (what a user has without one).
 * Every hold is put on one time base and checked (permits/holders.ts).
 */
import { median, quantile } from '../stats.js';
import type { PermitRow, PermitSample, PermitsResult } from '../results.js';
import { classNameOf, type Kind, LIMIT } from '../semaphore/cycles.js';
import { SemaphoreProcesses } from '../semaphore/processes.js';
import type { SemaphoreWorkerReport } from '../semaphore/worker.js';
import { countHolders } from './holders.js';

export const PERMITS_ID = 'permits';
const PROCESSES = 8;
const WAITERS_PER_PROCESS = 8;
const WRITERS_PER_PROCESS = 1;
const HOLD_MS = 1;

export interface PermitsPlan {
  readonly nodeCounts: readonly number[];
  readonly rounds: number;
  readonly phaseMs: number;
}

interface Entry {
  readonly kind: Kind;
  readonly primitive: PermitRow['primitive'];
  readonly role: PermitRow['role'];
}

const ENTRIES: readonly Entry[] = [
  { kind: 'semaphore', primitive: 'semaphore', role: 'ours' },
  { kind: 'peer', primitive: 'semaphore', role: 'peer' },
  { kind: 'rwlock', primitive: 'rwlock', role: 'ours' },
  { kind: 'mutex', primitive: 'rwlock', role: 'reference' },
];

export async function runPermits(
  plan: PermitsPlan,
  urls: readonly string[],
  runId: string,
  build: { readonly script: string; readonly libraryUrl: string },
  progress: (text: string) => void,
): Promise<PermitsResult> {
  const rows: PermitRow[] = [];
  let timeUncertaintyMs = 0;
  for (const nodes of plan.nodeCounts) {
    const config = { libraryUrl: build.libraryUrl, urls: urls.slice(0, nodes), kinds: ENTRIES.map((e) => e.kind), waiters: WAITERS_PER_PROCESS, phaseMs: plan.phaseMs, holdMs: HOLD_MS };
    const processes = await SemaphoreProcesses.start(build.script, config, PROCESSES);
    try {
      const mine = ENTRIES.map((entry): PermitRow => ({
        primitive: entry.primitive,
        nodes,
        library: entry.kind === 'peer' ? 'redis-semaphore' : 'quorumlock',
        role: entry.role,
        className: classNameOf(entry.kind, nodes),
        rounds: [],
        summary: emptySample(),
      }));
      for (let round = 0; round < plan.rounds; round++) {
        const order = ENTRIES.map((_, index) => index);
        if (round % 2 === 1) order.reverse();
        for (const index of order) {
          const entry = ENTRIES[index]!;
          const writers = entry.primitive === 'rwlock' ? WRITERS_PER_PROCESS : 0;
          const report = await processes.round(`${runId}:permits:${nodes}:${round}:${entry.kind}`, index, writers);
          mine[index]!.rounds.push(sampleOf(entry, report, plan.phaseMs));
        }
        progress(`permits on ${nodes} node${nodes === 1 ? '' : 's'}, round ${round + 1}/${plan.rounds}`);
      }
      timeUncertaintyMs = Math.max(timeUncertaintyMs, processes.timeUncertaintyMs);
      for (const row of mine) row.summary = summarise(row.rounds);
      rows.push(...mine);
    } finally {
      await processes.close();
    }
  }
  return {
    limit: LIMIT,
    processes: PROCESSES,
    waitersPerProcess: WAITERS_PER_PROCESS,
    writersPerProcess: WRITERS_PER_PROCESS,
    holdMs: HOLD_MS,
    phaseMs: plan.phaseMs,
    rounds: plan.rounds,
    timeUncertaintyMs,
    rows,
  };
}

function sampleOf(entry: Entry, report: SemaphoreWorkerReport, phaseMs: number): PermitSample {
  // The mutex beside the read-write lock takes every section alone: each is a writer to the check.
  const holds = entry.kind === 'mutex' ? report.holds.map(([start, end]) => [start, end, 1] as const) : report.holds;
  const limit = entry.primitive === 'semaphore' ? LIMIT : undefined;
  const { maxHolders, violations, meanHoldMs } = countHolders(holds, limit);
  const sectionsPerSec = (report.sections / phaseMs) * 1000;
  const allowed = entry.kind === 'rwlock' ? Number.NaN : (limit ?? 1);
  return {
    sectionsPerSec,
    writesPerSec: ((entry.primitive === 'rwlock' ? report.writerWaits.length : 0) / phaseMs) * 1000,
    capShare: sectionsPerSec / ((allowed * 1000) / meanHoldMs),
    requestsPerSection: report.requests / Math.max(report.sections, 1),
    waitP99Ms: quantile([...report.waits], 0.99),
    writerWaitP99Ms: report.writerWaits.length === 0 ? Number.NaN : quantile([...report.writerWaits], 0.99),
    meanHoldMs,
    maxHolders,
    violations,
  };
}

const MEDIANS = ['sectionsPerSec', 'writesPerSec', 'capShare', 'requestsPerSection', 'waitP99Ms', 'writerWaitP99Ms', 'meanHoldMs'] as const;

function summarise(rounds: readonly PermitSample[]): PermitSample {
  const summary: Record<keyof PermitSample, number> = { ...emptySample() };
  for (const key of MEDIANS) {
    const values = rounds.map((r) => r[key]).filter(Number.isFinite);
    summary[key] = values.length === 0 ? Number.NaN : median(values);
  }
  summary.maxHolders = Math.max(0, ...rounds.map((r) => r.maxHolders));
  summary.violations = rounds.reduce((sum, r) => sum + r.violations, 0);
  return summary;
}

function emptySample(): PermitSample {
  return {
    sectionsPerSec: Number.NaN,
    writesPerSec: Number.NaN,
    capShare: Number.NaN,
    requestsPerSection: Number.NaN,
    waitP99Ms: Number.NaN,
    writerWaitP99Ms: Number.NaN,
    meanHoldMs: Number.NaN,
    maxHolders: 0,
    violations: 0,
  };
}
