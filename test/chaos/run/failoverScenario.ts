/**
 * Chaos on Sentinel-managed nodes: every node of the lockers is a
 * SentinelGroup (a master, a replica, three sentinels), and a nemesis fails
 * one group's master over at a time (kill -9, SIGSTOP, a lossy kill -9 with
 * replication stalled, SENTINEL FAILOVER) while lockers contend, or a control
 * script loses a lock on purpose. The history is checked like any other.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Lock, RedlockOptions } from '../../../src/index.js';
import type { RedisServer } from '../../support/RedisServer.js';
import { type FailoverKind, type FailoverRecord, SentinelGroup } from '../../support/SentinelGroup.js';
import { checkHistory } from '../check/checker.js';
import { formatFindings } from '../check/report.js';
import { FaultLog } from '../history/FaultLog.js';
import { HistoryBuffer, ObservedRedlock } from '../history/ObservedRedlock.js';
import { sharedNow } from '../history/timeBase.js';
import type { History } from '../history/types.js';
import { Progress } from './progress.js';
import { Rng, seedFromEnv } from './rng.js';
import { grantsIn, resourcesFor, withReentry } from './scenario.js';
import { sleep } from './sleep.js';
import { CHAOS_DIR, ChaosReport, type ScenarioKind, type ScenarioSummary, slug, summarize, timestamp } from './summary.js';
import { type Action, DEFAULT_MIX, mergeStats, runClient } from './workload.js';

/**
 * Failovers take 1-3 s here, so a lock lives longer than one (TTL 3 s), and
 * WAIT gets 100 ms of a 200 ms node timeout on a busy 2-core machine.
 */
const TTL_MS = 3_000;
const NODE_TIMEOUT_MS = 200;
const SYNC = Object.freeze({ replicas: 1, timeoutMs: 100 });
const RETRY = Object.freeze({ baseDelayMs: 10, maxDelayMs: 100 });
/** Between two failovers, so that lockers find the group settled for a while. */
const PAUSE_BETWEEN_MS: readonly [number, number] = [500, 1500];

export interface FailoverScenarioSpec {
  readonly name: string;
  readonly rules: readonly number[];
  /** The first `groups` groups of the file are the lockers' nodes (1: the single-instance lock). */
  readonly groups: number;
  /** syncReplicas: { replicas: 1 }. */
  readonly sync: boolean;
  /** Fencing tokens on: the checker then also verifies that they increase across failovers. */
  readonly fencing?: boolean;
  readonly kinds: readonly FailoverKind[];
  readonly budgetMs: number;
  readonly clients?: number;
  readonly resources?: number;
  readonly mix?: Readonly<Record<Action, number>>;
}

export interface FailoverControlContext {
  readonly groups: readonly SentinelGroup[];
  readonly faults: FaultLog;
  /** Lockers A and B (B takes the lock once the steps have lost A's). */
  readonly lockers: readonly [ObservedRedlock, ObservedRedlock];
  readonly resource: string;
  /**
   * Fails group `index` over, recorded as a fault. A lossy one proves that it
   * lost the lock: the old master held the resource's key, the promoted one
   * does not (otherwise the steps fail, saying so).
   */
  failover(index: number, kind: FailoverKind): Promise<void>;
}

export interface FailoverChaosFile {
  readonly report: ChaosReport;
  /** A safe scenario: no finding, no unexpected error, some acquisitions and failovers. */
  expectSafe(spec: FailoverScenarioSpec): Promise<ScenarioSummary>;
  /**
   * A negative control: the steps take A's lock and lose it on purpose; then
   * B acquires it, both hold it a while, and the checker must catch the overlap.
   */
  expectCaught(spec: Omit<FailoverScenarioSpec, 'kinds' | 'budgetMs'>, steps: (ctx: FailoverControlContext) => Promise<Lock>): Promise<ScenarioSummary>;
}

/** The frame of a failover chaos file: `groups` Sentinel groups for the file, stopped in afterAll. */
export function failoverChaosFile(file: string, groupCount: number): FailoverChaosFile {
  const report = new ChaosReport(file);
  let groups: SentinelGroup[] = [];
  beforeAll(async () => {
    const started = await Promise.allSettled(Array.from({ length: groupCount }, (_, i) => SentinelGroup.start({ name: `g${i}` })));
    groups = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 120_000);
  afterAll(async () => {
    report.finish();
    await Promise.all(groups.map((group) => group.stop()));
  }, 60_000);
  return {
    report,
    async expectSafe(spec) {
      const { summary, history, check, roles } = await runFailoverScenario(groups.slice(0, spec.groups), spec);
      report.add(summary);
      if (!summary.passed) {
        console.error(`[chaos] history saved to ${report.saveHistory(spec.name, history)}`);
        console.error(`[chaos] server roles saved to ${roles.save(spec.name)}`);
      }
      expect(formatFindings(check, history)).toBe('');
      expect(summary.unexpectedErrors).toEqual([]);
      expect(summary.acquisitions).toBeGreaterThan(0);
      expect(failoversIn(summary)).toBeGreaterThan(0);
      return summary;
    },
    async expectCaught(spec, steps) {
      const { summary, history, check, construction } = await runFailoverControl(groups.slice(0, spec.groups), spec, steps);
      report.add(summary);
      const path = report.saveHistory(spec.name, history);
      expect(summary.unexpectedErrors).toEqual([]);
      console.log(`[chaos] ${spec.name}: violation constructed\n  ${construction.join('\n  ')}`);
      expect(check.overlaps.length, `the checker missed the overlap (history: ${path})`).toBeGreaterThan(0);
      expect(summary.passed).toBe(true);
      return summary;
    },
  };
}

/** Failovers recorded in a summary's faults. */
export function failoversIn(summary: ScenarioSummary): number {
  return Object.entries(summary.faults).reduce((n, [kind, count]) => (kind.startsWith('failover') ? n + count : n), 0);
}

interface Run {
  readonly roles: RoleTimeline;
  readonly summary: ScenarioSummary;
  readonly history: History;
  readonly check: ReturnType<typeof checkHistory>;
}

/**
 * Every server's role as it changes, sampled every 50 ms on the shared time
 * base: what explains a finding here (two masters at once, a master turned
 * replica that resynced its data away). Kept only when a scenario fails.
 */
class RoleTimeline {
  readonly changes: { at: number; group: string; server: number; port: number; role: string }[] = [];
  readonly #clients: Redis[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(groups: readonly SentinelGroup[]) {
    const watched = groups.flatMap((group) =>
      group.servers.map((server, index) => {
        const client = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 0, enableOfflineQueue: false, commandTimeout: 300, retryStrategy: () => 200 });
        client.on('error', () => undefined);
        this.#clients.push(client);
        return { group: group.name, server: index, port: server.port, client, last: '' };
      }),
    );
    this.#timer = setInterval(() => {
      for (const watch of watched) {
        watch.client.role().then(
          (reply) => {
            const [kind, host, port, state] = reply as unknown[];
            const role = kind === 'slave' ? `replica of ${String(host)}:${String(port)} (${String(state)})` : String(kind);
            if (role === watch.last) return;
            watch.last = role;
            this.changes.push({ at: sharedNow(), group: watch.group, server: watch.server, port: watch.port, role });
          },
          () => undefined,
        );
      }
    }, 50);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const client of this.#clients.splice(0)) client.disconnect();
  }

  save(scenario: string): string {
    const dir = process.env['CHAOS_RUN_DIR'] ?? CHAOS_DIR;
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `roles-${slug(scenario)}-${timestamp()}.json`);
    writeFileSync(path, JSON.stringify(this.changes));
    return path;
  }
}

/** Lockers, each with a Sentinel client of its own per group. */
class Lockers {
  readonly buffer = new HistoryBuffer();
  readonly #clients: Redis[] = [];

  constructor(
    private readonly groups: readonly SentinelGroup[],
    private readonly sync: boolean,
    private readonly fencing = false,
  ) {}

  async make(label: string): Promise<ObservedRedlock> {
    const clients = this.groups.map((group) => group.client());
    this.#clients.push(...clients);
    await Promise.all(clients.map((client) => (client.status === 'ready' ? undefined : new Promise((resolve) => client.once('ready', resolve)))));
    const nodeNames = new Map(
      this.groups.map((group) => [`${group.name} via sentinels ${group.sentinelAddresses.map((a) => `${a.host}:${a.port}`).join(',')}`, group.name]),
    );
    const options: Omit<RedlockOptions, 'clock'> = {
      nodeTimeoutMs: NODE_TIMEOUT_MS,
      acquireTimeoutMs: 1_500,
      retry: RETRY,
      ...(this.sync ? { syncReplicas: SYNC } : {}),
      fencing: this.fencing,
    };
    return new ObservedRedlock(clients, options, { client: label, sink: this.buffer, nodeNames });
  }

  close(): void {
    for (const client of this.#clients.splice(0)) client.disconnect();
  }
}

function summarizeRun(spec: Pick<FailoverScenarioSpec, 'name' | 'rules'>, kind: ScenarioKind, clients: number, lockers: Lockers, faults: FaultLog, extra: { seed?: number; budgetMs?: number; unexpected: readonly string[] }): Omit<Run, 'roles'> {
  const history: History = { ops: lockers.buffer.ops, handovers: lockers.buffer.handovers, faults: faults.records(), reentries: lockers.buffer.reentries };
  const check = checkHistory(history);
  const summary = summarize({
    scenario: spec.name,
    kind,
    rules: spec.rules,
    ...(extra.seed === undefined ? {} : { seed: extra.seed }),
    ...(extra.budgetMs === undefined ? {} : { budgetMs: extra.budgetMs }),
    clients,
    history,
    check,
    unexpectedErrors: extra.unexpected,
  });
  return { summary, history, check };
}

async function failOver(groups: readonly SentinelGroup[], faults: FaultLog, index: number, kind: FailoverKind): Promise<FailoverRecord> {
  const group = groups[index] as SentinelGroup;
  return faults.during(`failover (${kind})`, group.name, () => group.failover(kind));
}

async function runFailoverScenario(groups: readonly SentinelGroup[], spec: FailoverScenarioSpec): Promise<Run> {
  const seed = seedFromEnv();
  const rng = new Rng(seed);
  const faults = new FaultLog();
  const lockers = new Lockers(groups, spec.sync, spec.fencing);
  const roles = new RoleTimeline(groups);
  const clientCount = spec.clients ?? 8;
  const unexpected: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    unexpected.push(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  };
  process.on('unhandledRejection', onUnhandled);
  try {
    const all = await Promise.all(Array.from({ length: clientCount }, (_, i) => lockers.make(`c${i}`)));
    const controller = new AbortController();
    const progress = new Progress(spec.name, spec.budgetMs, () => grantsIn(lockers.buffer.ops));
    const config = { resources: resourcesFor(spec.name, spec.resources ?? 6), ttlMs: TTL_MS, maxHoldMs: 30, acquireTimeoutMs: 1_500, mix: spec.mix ?? DEFAULT_MIX };
    const workloads = all.map((locker, i) => runClient(locker, withReentry(config, all, i, lockers.buffer), rng.fork(), controller.signal));
    // One group at a time: on Redlock always a minority. The failover under way when the budget ends is finished.
    const nemesis = (async () => {
      const choice = rng.fork();
      for (;;) {
        await sleep(choice.int(...PAUSE_BETWEEN_MS), controller.signal);
        if (controller.signal.aborted) return;
        await failOver(groups, faults, choice.int(0, groups.length - 1), choice.pick(spec.kinds));
      }
    })().catch((error: unknown) => {
      // Handled at once: a harness failure during the budget is the nemesis's, not an unhandled rejection of the library's.
      unexpected.push(`nemesis: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    });
    await sleep(spec.budgetMs);
    controller.abort();
    const stats = mergeStats(await Promise.all(workloads));
    await nemesis;
    unexpected.push(...stats.unexpected);
    const run = summarizeRun(spec, 'safe', clientCount, lockers, faults, { seed, budgetMs: spec.budgetMs, unexpected });
    progress.done(run.summary);
    return { ...run, roles };
  } finally {
    roles.stop();
    lockers.close();
    process.off('unhandledRejection', onUnhandled);
  }
}

async function runFailoverControl(
  groups: readonly SentinelGroup[],
  spec: Omit<FailoverScenarioSpec, 'kinds' | 'budgetMs'>,
  steps: (ctx: FailoverControlContext) => Promise<Lock>,
): Promise<Omit<Run, 'roles'> & { readonly construction: readonly string[] }> {
  const faults = new FaultLog();
  const lockers = new Lockers(groups, spec.sync, spec.fencing);
  const unexpected: string[] = [];
  const construction: string[] = [];
  try {
    const pair: [ObservedRedlock, ObservedRedlock] = [await lockers.make('A'), await lockers.make('B')];
    const [resource] = resourcesFor(spec.name, 1) as [string];
    const failover = async (index: number, kind: FailoverKind): Promise<void> => {
      const group = groups[index] as SentinelGroup;
      if (kind !== 'lossy') {
        await failOver(groups, faults, index, kind);
        return;
      }
      const old = group.master;
      if (!(await holdsKey(group, old, resource))) throw new Error(`${group.name}: master :${old.port} lacks ${resource} before its lossy failover: A's lock is not there to lose`);
      const { to } = await failOver(groups, faults, index, kind);
      // The group settled on this master (the sentinels may have failed over once more since).
      const master = group.master;
      if (await holdsKey(group, master, resource)) throw new Error(`${group.name}: master :${master.port} still holds ${resource} after the lossy failover: it lost nothing`);
      const settled = master === group.servers[to] ? '' : `, and the group settled on :${master.port}, which lacks it too`;
      construction.push(`${group.name}: master :${old.port} held A's key with replication stalled and was killed; the promoted :${group.servers[to]?.port} lacks the key${settled}`);
    };
    const bothHold = async (lockA: Lock): Promise<void> => {
      construction.push(`A holds ${resource}${tokenNote(lockA)}; B acquires it now`);
      const lockB = await pair[1].acquire(resource, lockA.ttlMs, { acquireTimeoutMs: 10_000 });
      construction.push(`B acquired it${tokenNote(lockB)} while A still holds it`);
      // Both believe they hold it for a while: the overlap is B's whole hold, not a sliver.
      await sleep(100);
      await lockB.release();
      await lockA.release();
    };
    await steps({ groups, faults, lockers: pair, resource, failover })
      .then(bothHold)
      .catch((error: unknown) => unexpected.push(error instanceof Error ? (error.stack ?? error.message) : String(error)));
  } finally {
    lockers.close();
  }
  return { ...summarizeRun(spec, 'negative', 2, lockers, faults, { unexpected }), construction };
}

function tokenNote(lock: Lock): string {
  return lock.fencingToken === undefined ? '' : ` (fencing token ${lock.fencingToken})`;
}

/**
 * Whether `server` of the group has the key (asked directly, not through the
 * sentinels). EXISTS is asked again when it times out: on a loaded machine
 * the harness's 1 s command timeout ran out once in 100 controls.
 */
async function holdsKey(group: SentinelGroup, server: RedisServer, key: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await group.command(server, 'EXISTS', key)) === 1;
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('timed out')) throw error;
    }
  }
}
