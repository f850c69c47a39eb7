/**
 * Runs one safe scenario in this process: a few ObservedRedlock lockers, each
 * with its own ioredis clients through its own proxies, contend on a few
 * resources for the budget while the nemeses inject faults; then the history
 * is checked and summarized.
 */
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { type CheckResult, checkHistory } from '../check/checker.js';
import { FaultLog } from '../history/FaultLog.js';
import { HistoryBuffer, ObservedRedlock } from '../history/ObservedRedlock.js';
import type { History, OpRecord } from '../history/types.js';
import type { ChaosCluster } from './cluster.js';
import type { Nemesis } from './nemeses.js';
import { Progress } from './progress.js';
import { Rng, seedFromEnv } from './rng.js';
import { sleep } from './sleep.js';
import { type ScenarioSummary, slug, summarize } from './summary.js';
import { type ClientStats, DEFAULT_MIX, mergeStats, runClient, type WorkloadConfig } from './workload.js';

export interface LockerSettings {
  readonly ttlMs: number;
  readonly nodeTimeoutMs: number;
  readonly driftFactor?: number;
  readonly maxHoldMs: number;
  readonly acquireTimeoutMs: number;
  /** Hand out fencing tokens (the checker then verifies they increase). */
  readonly fencing: boolean;
}

/**
 * TTL 600 ms, node timeout 80 ms: short scenarios, many hand-overs. Retry
 * waits are short so waiters do not sleep through whole hand-overs.
 */
export const DEFAULT_LOCKER: LockerSettings = Object.freeze({
  ttlMs: 600,
  nodeTimeoutMs: 80,
  maxHoldMs: 30,
  acquireTimeoutMs: 1_500,
  fencing: false,
});

const RETRY = Object.freeze({ baseDelayMs: 10, maxDelayMs: 100 });

/** Redlock options for these settings. */
export function redlockOptions(locker: LockerSettings) {
  return {
    nodeTimeoutMs: locker.nodeTimeoutMs,
    acquireTimeoutMs: locker.acquireTimeoutMs,
    retry: RETRY,
    fencing: locker.fencing,
    ...(locker.driftFactor === undefined ? {} : { driftFactor: locker.driftFactor }),
  };
}

export interface ScenarioSpec {
  readonly name: string;
  /** Design rules (design.md) this scenario exercises; see README.md. */
  readonly rules: readonly number[];
  readonly nemeses: readonly Nemesis[];
  readonly budgetMs: number;
  readonly clients?: number;
  readonly resources?: number;
  readonly locker?: Partial<LockerSettings>;
  readonly mix?: WorkloadConfig['mix'];
  readonly seed?: number;
}

export interface ScenarioOutcome {
  readonly summary: ScenarioSummary;
  readonly history: History;
  readonly check: CheckResult;
  readonly stats: ClientStats;
  /** Errors thrown by a nemesis (the harness failed, not the library). */
  readonly nemesisErrors: readonly string[];
}

export function resourcesFor(scenario: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `chaos:${slug(scenario)}:r${i}`);
}

export async function waitReady(clients: readonly Redis[]): Promise<void> {
  await Promise.all(clients.map((c) => (c.status === 'ready' ? undefined : once(c, 'ready'))));
}

export async function runScenario(cluster: ChaosCluster, spec: ScenarioSpec): Promise<ScenarioOutcome> {
  const seed = spec.seed ?? seedFromEnv();
  const rng = new Rng(seed);
  const locker = { ...DEFAULT_LOCKER, ...spec.locker };
  const resources = resourcesFor(spec.name, spec.resources ?? 3);
  const clientCount = spec.clients ?? 4;
  const buffer = new HistoryBuffer();
  const faults = new FaultLog();
  const allClients: Redis[] = [];
  // Rule 10: no unhandled rejections. Vitest reports them too; here they also land
  // in the scenario's summary (listening through the clean-up, when idle connections close).
  const unhandled: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  };
  process.on('unhandledRejection', onUnhandled);
  let run: { stats: ClientStats; nemesisErrors: string[]; progress: Progress };
  try {
    run = await drive(cluster, spec, locker, resources, clientCount, rng, buffer, faults, allClients);
  } finally {
    await cluster.closeScenario(allClients);
    await sleep(IDLE_CONNECTIONS_CLOSE_MS);
    process.off('unhandledRejection', onUnhandled);
  }
  const { stats, nemesisErrors, progress } = run;
  const history: History = { ops: buffer.ops, handovers: buffer.handovers, faults: faults.records(), reentries: buffer.reentries };
  const check = checkHistory(history);
  const summary = summarize({
    scenario: spec.name,
    kind: 'safe',
    rules: spec.rules,
    seed,
    budgetMs: spec.budgetMs,
    clients: clientCount,
    history,
    check,
    unexpectedErrors: [...stats.unexpected, ...nemesisErrors, ...unhandled],
  });
  progress.done(summary);
  return { summary, history, check, stats, nemesisErrors };
}

/** Client `i` records its re-entries in `sink`; the next client's locker re-enters its locks by value. */
export function withReentry(config: WorkloadConfig, lockers: readonly ObservedRedlock[], i: number, sink: HistoryBuffer): WorkloadConfig {
  const peer = lockers.length > 1 ? lockers[(i + 1) % lockers.length] : undefined;
  return { ...config, reentry: { client: `c${i}`, ...(peer === undefined ? {} : { peer }), record: (r) => sink.reentry(r) } };
}

export function grantsIn(ops: readonly OpRecord[]): number {
  let grants = 0;
  for (const op of ops) if (op.kind === 'acquire' && op.result === 'ok') grants++;
  return grants;
}

/** The library closes its idle wake-up subscriber connections after 500 ms. */
const IDLE_CONNECTIONS_CLOSE_MS = 600;

async function drive(
  cluster: ChaosCluster,
  spec: ScenarioSpec,
  locker: LockerSettings,
  resources: readonly string[],
  clientCount: number,
  rng: Rng,
  buffer: HistoryBuffer,
  faults: FaultLog,
  allClients: Redis[],
): Promise<{ stats: ClientStats; nemesisErrors: string[]; progress: Progress }> {
  const lockers: ObservedRedlock[] = [];
  for (let i = 0; i < clientCount; i++) {
    const links = await cluster.openLinks();
    const clients = cluster.clientsThrough(links);
    allClients.push(...clients);
    await waitReady(clients);
    lockers.push(new ObservedRedlock(clients, redlockOptions(locker), { client: `c${i}`, sink: buffer, nodeNames: links.nodeNames }));
  }
  const config: WorkloadConfig = {
    resources,
    ttlMs: locker.ttlMs,
    maxHoldMs: locker.maxHoldMs,
    acquireTimeoutMs: locker.acquireTimeoutMs,
    mix: spec.mix ?? DEFAULT_MIX,
  };
  const controller = new AbortController();
  const progress = new Progress(spec.name, spec.budgetMs, () => grantsIn(buffer.ops));
  const workloads = lockers.map((l, i) => runClient(l, withReentry(config, lockers, i, buffer), rng.fork(), controller.signal));
  const nemeses = spec.nemeses.map((n) =>
    n.run({
      cluster,
      faults,
      rng: rng.fork(),
      signal: controller.signal,
      maxTtlMs: locker.ttlMs,
      keyPattern: `chaos:${slug(spec.name)}:*`,
    }),
  );
  await sleep(spec.budgetMs);
  controller.abort();
  const stats = mergeStats(await Promise.all(workloads));
  const nemesisErrors = (await Promise.allSettled(nemeses)).flatMap((r) =>
    r.status === 'rejected' ? [String((r.reason as Error)?.stack ?? r.reason)] : [],
  );
  progress.stop();
  return { stats, nemesisErrors, progress };
}
