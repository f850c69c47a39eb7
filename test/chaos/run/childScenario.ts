/**
 * Runs a safe scenario whose lockers live in separate worker processes
 * (worker/chaosWorker.ts), each with its own ioredis clients through its own
 * proxies in this process. Node faults come from the usual nemeses; the
 * workers themselves can be paused with SIGSTOP beyond the TTL and have their
 * wall clock jump. Histories come back over IPC on the shared time base; the
 * scenario refuses to judge them if the worker's base disagrees with ours.
 */
import { type CheckResult, checkHistory } from '../check/checker.js';
import { FaultLog } from '../history/FaultLog.js';
import type { FaultRecord, History, HandoverRecord, OpRecord } from '../history/types.js';
import type { WorkerConfig } from '../worker/protocol.js';
import { killAllWorkers, WorkerProcess } from './childWorkers.js';
import type { ChaosCluster } from './cluster.js';
import type { Nemesis } from './nemeses.js';
import { Progress } from './progress.js';
import { Rng, seedFromEnv } from './rng.js';
import { DEFAULT_LOCKER, type LockerSettings, resourcesFor } from './scenario.js';
import { sleep } from './sleep.js';
import { type ScenarioSummary, slug, summarize } from './summary.js';
import { type ClientStats, DEFAULT_MIX, mergeStats } from './workload.js';

/** Above this, the cross-process time base is not trusted (timeBase.ts). */
export const MAX_TIME_BASE_DEVIATION_MS = 2;

export interface ChildScenarioSpec {
  readonly name: string;
  readonly rules: readonly number[];
  readonly budgetMs: number;
  readonly workers: number;
  readonly lockersPerWorker: number;
  readonly nemeses: readonly Nemesis[];
  readonly pauseWorkers: boolean;
  readonly wallClockJumps: boolean;
  readonly resources?: number;
  readonly locker?: Partial<LockerSettings>;
  readonly seed?: number;
}

export interface ChildScenarioOutcome {
  readonly summary: ScenarioSummary;
  readonly history: History;
  readonly check: CheckResult;
  readonly stats: ClientStats;
  /** Worst disagreement between a worker's time base and ours. */
  readonly timeBaseDeviationMs: number;
}

export async function runChildScenario(cluster: ChaosCluster, spec: ChildScenarioSpec): Promise<ChildScenarioOutcome> {
  const seed = spec.seed ?? seedFromEnv();
  const rng = new Rng(seed);
  const locker = { ...DEFAULT_LOCKER, ...spec.locker };
  const resources = resourcesFor(spec.name, spec.resources ?? 3);
  const faults = new FaultLog();
  const workers = Array.from({ length: spec.workers }, (_, i) => new WorkerProcess(`w${i}`));
  try {
    await Promise.all(
      workers.map(async (worker) => {
        const lockers = [];
        for (let i = 0; i < spec.lockersPerWorker; i++) {
          const links = await cluster.openLinks();
          lockers.push(links.proxies.map((p, n) => ({ host: p.host, port: p.port, nodeName: cluster.nodeName(n) })));
        }
        const config: WorkerConfig = {
          name: worker.name,
          seed: Math.floor(rng.next() * 2 ** 32),
          lockers,
          locker,
          workload: { resources, ttlMs: locker.ttlMs, maxHoldMs: locker.maxHoldMs, acquireTimeoutMs: locker.acquireTimeoutMs, mix: DEFAULT_MIX },
          wallClockJumps: spec.wallClockJumps,
        };
        await worker.start(config);
      }),
    );
    const deviations = await Promise.all(workers.map((w) => w.timeBaseDeviationMs()));
    const timeBaseDeviationMs = Math.max(0, ...deviations);

    const controller = new AbortController();
    const progress = new Progress(spec.name, spec.budgetMs, () => workers.reduce((n, w) => n + w.acquisitions, 0));
    const nemeses = [...spec.nemeses, ...(spec.pauseWorkers ? [pauseWorkerBeyondTtl(workers)] : [])].map((n) =>
      n.run({ cluster, faults, rng: rng.fork(), signal: controller.signal, maxTtlMs: locker.ttlMs, keyPattern: `chaos:${slug(spec.name)}:*` }),
    );
    await sleep(spec.budgetMs);
    controller.abort();
    const nemesisErrors = (await Promise.allSettled(nemeses)).flatMap((r) =>
      r.status === 'rejected' ? [String((r.reason as Error)?.stack ?? r.reason)] : [],
    );
    const histories = await Promise.all(workers.map((w) => w.stop()));
    progress.stop();

    const ops: OpRecord[] = histories.flatMap((h) => h.ops);
    const handovers: HandoverRecord[] = histories.flatMap((h) => h.handovers);
    const allFaults: FaultRecord[] = [...faults.records(), ...histories.flatMap((h) => h.faults)].map((f, i) => ({ ...f, id: i + 1 }));
    const history: History = { ops, handovers, faults: allFaults };
    const check = checkHistory(history);
    const stats = mergeStats(histories.map((h) => h.stats));
    const timeBase =
      timeBaseDeviationMs > MAX_TIME_BASE_DEVIATION_MS
        ? [`time base: a worker's clock base is ${timeBaseDeviationMs.toFixed(3)} ms off ours; cross-process windows cannot be compared`]
        : [];
    const summary = summarize({
      scenario: spec.name,
      kind: 'safe',
      rules: spec.rules,
      seed,
      budgetMs: spec.budgetMs,
      clients: spec.workers * spec.lockersPerWorker,
      processes: spec.workers,
      history,
      check,
      timeBaseDeviationMs,
      unexpectedErrors: [...stats.unexpected, ...histories.flatMap((h) => h.unhandled), ...nemesisErrors, ...timeBase],
    });
    progress.done(summary);
    return { summary, history, check, stats, timeBaseDeviationMs };
  } finally {
    killAllWorkers();
    await cluster.closeScenario();
  }
}

/** SIGSTOP one worker process at a time for longer than the TTL: its locks expire under it. */
function pauseWorkerBeyondTtl(workers: readonly WorkerProcess[]): Nemesis {
  return {
    name: 'SIGSTOP a locker process for > TTL',
    async run(ctx) {
      while (!ctx.signal.aborted) {
        await sleep(ctx.rng.int(100, 500), ctx.signal);
        if (ctx.signal.aborted) break;
        const worker = ctx.rng.pick(workers);
        const pauseMs = Math.floor(ctx.maxTtlMs * 1.5);
        await ctx.faults.during(
          'SIGSTOP locker process',
          worker.name,
          async () => {
            worker.pause();
            try {
              await sleep(pauseMs);
            } finally {
              worker.resume();
            }
          },
          `${pauseMs} ms`,
        );
      }
    },
  };
}
