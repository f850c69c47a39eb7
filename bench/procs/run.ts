/**
 * Runs the procs scenario on every topology: per round, every contender in
 * turn (the order rotates between rounds and topologies), each in its own
 * fresh child processes, then medians over rounds. Contenders take turns in
 * one run because this machine's speed drifts: only side-by-side numbers
 * compare.
 */
import type { Redis } from 'ioredis';
import { openAdminClient } from '../clients.js';
import { contenderKey, type Contender } from '../contenders/index.js';
import { METRICS } from '../metrics.js';
import type { ProcsPlan } from '../plan.js';
import { Progress } from '../progress.js';
import { formatMetric } from '../report/format.js';
import type { ScenarioResult } from '../results.js';
import { rotate } from '../runner.js';
import { PROCS_COLUMNS, PROCS_ID, procsTitle, totalWaiters } from '../scenarios/procs.js';
import { procsFootnotes } from './footnotes.js';
import { measureProcs, type ProcsMeasurement } from './measure.js';
import type { WorkerConfig } from './protocol.js';
import { Tally } from './tally.js';

export interface ProcsLibraries {
  /** The bundled worker (procs/build.ts). */
  readonly script: string;
  readonly libraryUrl: string;
  readonly candidate: WorkerConfig['candidate'];
}

/** One ScenarioResult per node count of the plan, by node count. */
export async function runProcs(
  plan: ProcsPlan,
  ttlMs: number,
  urls: readonly string[],
  runId: string,
  libraries: ProcsLibraries,
): Promise<Map<number, ScenarioResult>> {
  const progress = new Progress(plan.nodeCounts.length * plan.rounds * plan.contenders.length);
  const results = new Map<number, ScenarioResult>();
  for (const [index, nodes] of plan.nodeCounts.entries()) {
    const admins: Redis[] = [];
    try {
      for (const url of urls.slice(0, nodes)) admins.push(await openAdminClient(url));
      const topology = { urls: urls.slice(0, nodes), admins, prefix: `${runId}:${nodes}n:${PROCS_ID}`, rotation: index };
      results.set(nodes, await runTopology(plan, ttlMs, topology, libraries, progress));
    } finally {
      for (const admin of admins) admin.disconnect();
    }
  }
  return results;
}

interface Topology {
  readonly urls: readonly string[];
  readonly admins: readonly Redis[];
  readonly prefix: string;
  /** Added to the round when rotating the order, so each topology starts with another contender. */
  readonly rotation: number;
}

async function runTopology(plan: ProcsPlan, ttlMs: number, topology: Topology, libraries: ProcsLibraries, progress: Progress): Promise<ScenarioResult> {
  const nodes = topology.urls.length;
  const tallies = new Map<Contender, Tally>(plan.contenders.map((c) => [c, new Tally(c, nodes)]));
  const timeBase = { largestOffsetMs: 0, uncertaintyMs: 0 };
  for (let round = 0; round < plan.rounds; round++) {
    for (const contender of rotate(plan.contenders, round + topology.rotation)) {
      const key = contenderKey(contender);
      const measured = await measureProcs({
        ...libraries,
        shape: plan.shape,
        contender: key,
        urls: topology.urls,
        admins: topology.admins,
        keyPrefix: `${topology.prefix}:r${round}:${key}`,
        ttlMs,
        timeoutMs: plan.timeoutMs,
      });
      tallies.get(contender)?.add(round, measured);
      timeBase.largestOffsetMs = Math.max(timeBase.largestOffsetMs, measured.timeBase.largestOffsetMs);
      timeBase.uncertaintyMs = Math.max(timeBase.uncertaintyMs, measured.timeBase.uncertaintyMs);
      report(progress, `${nodes} node${nodes === 1 ? '' : 's'} · ${PROCS_ID} · round ${round + 1}/${plan.rounds} · ${key}`, measured);
    }
  }
  const contenders = [...tallies.values()].map((tally) => tally.finish());
  return {
    id: PROCS_ID,
    title: procsTitle(plan.shape),
    kind: 'contended',
    headline: 'cyclesPerSec',
    columns: PROCS_COLUMNS,
    rounds: plan.rounds,
    budget: { maxCycles: totalWaiters(plan.shape) * plan.shape.sections, maxMs: plan.timeoutMs, drainMs: 0 },
    contenders,
    parameters: { ...plan.shape, timeoutS: plan.timeoutMs / 1000 },
    footnotes: procsFootnotes(plan, contenders, timeBase),
  };
}

function report(progress: Progress, what: string, measured: ProcsMeasurement): void {
  const speed = `${formatMetric('cyclesPerSec', measured.analysis?.sample.cyclesPerSec)} ${METRICS.cyclesPerSec.heading}`;
  progress.step(`${what}: ${speed}${measured.unfinished === undefined ? '' : ` (${measured.unfinished.detail})`}`);
  for (const note of measured.notes) progress.note(note);
}
