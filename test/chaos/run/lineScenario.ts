/**
 * The wait-line scenario (issue #17): worker processes (worker/lineWorker.ts),
 * each with several waiters, acquire() one hot resource on 5 real nodes, so
 * that most of them wait in their process's line and in the nodes' wait
 * lines. Meanwhile waiter processes are killed (-9) and SIGSTOPped while they
 * wait, holder processes are killed mid-hold, and (optionally) nodes are
 * killed and paused. A killed worker is replaced at once by a spare started
 * beforehand, so contention goes on. Every worker writes its records to a
 * journal as they happen, synchronously (a killed worker sends nothing at the
 * end); its IPC messages give this process a live view of who holds and who
 * waits, for the fault injectors.
 *
 * The history is checked for overlaps (check/checker.ts) and measured for
 * liveness (check/liveness.ts): the longest time the resource sat free while
 * live waiters wanted it, against the design's dead-waiter bound, lease +
 * retry.maxDelayMs. With node faults it is measured twice: over the time all
 * nodes were up and had been for a settle period (compared to the bound), and
 * over all time a quorum of nodes was up (a node fault's own effects on the
 * lines come on top of the bound there: reported, and held only to the
 * waiters' own acquire timeout, beyond which a live waiter starving would be
 * a hang).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_OPTIONS } from '../../../src/index.js';
import { RESERVATION_MS } from '../../../src/scripts/line.js';
import { LEASE_MS } from '../../../src/wakeup/LinePosition.js';
import { type CheckResult, checkHistory } from '../check/checker.js';
import { formatHoldOverlap, overlappingHolds } from '../check/holds.js';
import { type Interval, type LivenessResult, measureLiveness, type ProcessOutage, subtract, withoutQuorum } from '../check/liveness.js';
import { FaultLog } from '../history/FaultLog.js';
import { sharedNow } from '../history/timeBase.js';
import type { FaultRecord, HandoverRecord, History, HoldRecord, OpRecord, ReleaseIntent, WantEnd, WantRecord } from '../history/types.js';
import type { FromWorker, LineWorkerConfig, LineWorkerStats } from '../worker/protocol.js';
import { MAX_TIME_BASE_DEVIATION_MS } from './childScenario.js';
import { killAllWorkers, WorkerProcess } from './childWorkers.js';
import type { ChaosCluster } from './cluster.js';
import { LineSnapshots } from './lineSnapshots.js';
import { Progress } from './progress.js';
import { Rng, seedFromEnv } from './rng.js';
import { resourcesFor } from './scenario.js';
import { sleep } from './sleep.js';
import { type ScenarioSummary, summarize } from './summary.js';

const LINE_WORKER = 'test/chaos/worker/lineWorker.ts';
/** Starts of one worker at most, until its time base agrees with ours (see startWorker). */
const START_ATTEMPTS = 8;

/** Fault kinds of this scenario (the summary counts them by kind). */
export const WAITER_KILL = 'kill -9 waiter';
export const HOLDER_KILL = 'kill -9 holder';
export const WAITER_STOP = 'SIGSTOP waiter';
export const NODE_KILL = 'kill -9 node';
export const NODE_STOP = 'SIGSTOP node';

/**
 * The library's default retry policy: the bound is stated for it. TTL 600 ms
 * and node timeout 80 ms as in the other scenarios; fencing on, so token
 * order is checked across handoffs too.
 */
export const LINE_LOCKER = Object.freeze({
  ttlMs: 600,
  nodeTimeoutMs: 80,
  fencing: true,
  retry: { baseDelayMs: DEFAULT_OPTIONS.retry.baseDelayMs, maxDelayMs: DEFAULT_OPTIONS.retry.maxDelayMs },
});

/** How long a waiter waits before it gives up (a tenth of the calls: IMPATIENT_TIMEOUT_MS). */
export const WAITER_ACQUIRE_TIMEOUT_MS = 4_000;
const IMPATIENT_TIMEOUT_MS = 300;

/**
 * The design's bound on the time a dead or paused waiter costs the line: its
 * lease plus one backoff delay, counted from when it stopped keeping its
 * place. Counted from a release that handed the key to a head about to lapse
 * (the histories show it: a reservation for a waiter with 10 ms of lease
 * left), the reservation takes the lease's place; both are 600 ms.
 */
export const LIVENESS_BOUND_MS = Math.max(LEASE_MS, RESERVATION_MS) + LINE_LOCKER.retry.maxDelayMs;

/**
 * What the scenario allows: the bound plus 500 ms for a busy 2-core machine,
 * where timers fire late, records and IPC wait for the CPU, spares are
 * started while the run goes on, and a claim takes up to two rounds (acquire,
 * then writing fencing tokens back) of up to the node timeout each.
 */
export const LIVENESS_LIMIT_MS = LIVENESS_BOUND_MS + 500;

/**
 * After a node fault ends, how long its effects may last: a node restarted
 * empty lost its lines until each waiter's next attempt there, at most one
 * backoff delay away, and a node resumed from SIGSTOP has let leases pass that
 * its waiters renew within one lease.
 */
export const NODE_FAULT_SETTLE_MS = LEASE_MS + LINE_LOCKER.retry.maxDelayMs;

export interface LineScenarioSpec {
  readonly name: string;
  readonly rules: readonly number[];
  readonly budgetMs: number;
  /** Worker processes running at any time (killed ones are replaced). */
  readonly processes: number;
  readonly lockersPerProcess: number;
  readonly waitersPerLocker: number;
  /** Workers started ahead, ready to replace a killed one at once. */
  readonly spares: number;
  readonly waiterKills: boolean;
  readonly waiterStops: boolean;
  readonly holderKills: boolean;
  readonly nodeFaults: boolean;
  /**
   * Negative control of the liveness figure: half a second into the run, a
   * squatter outside the library (so outside the history) sets the key on
   * every node, and keeps it until the figure, measured on the journals so
   * far, is past its limit (or for this long at most; the run lasts until
   * the squat ends). The figure must exceed its limit.
   */
  readonly squatMs?: number;
  /**
   * The lockers' fencing (default: on, as LINE_LOCKER). Off, a handoff a
   * quorum announced is taken as the lock itself (wakeup/handoffGrant.ts);
   * with fencing every handoff is claimed first.
   */
  readonly fencing?: boolean;
  readonly seed?: number;
}

export interface LineLiveness {
  /** Time the workers' event loops did not run, SIGSTOPs aside (summed over processes): not counted as live waiters. */
  readonly stalledMs: number;
  /** Time this process (every locker's proxies) did not run: taken out of the figure's stretches, as a stall. */
  readonly harnessStalledMs: number;
  /** All nodes up, and for NODE_FAULT_SETTLE_MS since the last node fault ended. */
  readonly healthy: LivenessResult;
  /** Every moment a quorum of nodes was up (node faults' own effects included). */
  readonly quorumUp: LivenessResult;
  readonly boundMs: number;
}

export interface LineScenarioOutcome {
  readonly summary: ScenarioSummary;
  readonly history: History;
  readonly check: CheckResult;
  /** Callers whose holds overlapped (check/holds.ts), formatted. */
  readonly holdOverlaps: readonly string[];
  readonly liveness: LineLiveness;
  readonly timeBaseDeviationMs: number;
  readonly processesStarted: number;
}

/** One worker process, and the live view of it its IPC messages give (for the fault injectors). */
class LineWorker {
  readonly process: WorkerProcess;
  /** Values this worker holds (handed over, not yet released), as far as its messages told. */
  readonly held = new Set<string>();
  /** Its acquire() calls still outstanding. */
  readonly waiting = new Set<string>();
  killedAt: number | undefined;
  stopped = false;
  running = false;
  stats: LineWorkerStats | undefined;
  unhandled: readonly string[] = [];
  readonly done: Promise<void>;

  constructor(
    readonly name: string,
    readonly journal: string,
    onHandover: () => void,
  ) {
    this.process = new WorkerProcess(name, LINE_WORKER);
    let resolveDone: () => void = () => undefined;
    this.done = new Promise((resolve) => (resolveDone = resolve));
    this.process.child.on('message', (message: FromWorker) => {
      switch (message.type) {
        case 'line-done':
          this.stats = message.stats;
          this.unhandled = message.unhandled;
          resolveDone();
          return;
        case 'handover':
          this.held.add(message.record.value);
          onHandover();
          return;
        case 'op':
          if (message.record.kind === 'release') this.held.delete(message.record.value);
          return;
        case 'want':
          this.waiting.add(message.id);
          return;
        case 'wanted':
          this.waiting.delete(message.id);
          return;
        default:
          return;
      }
    });
  }

  get canAct(): boolean {
    return this.running && this.killedAt === undefined && !this.stopped;
  }
}

/** The workers' journals, assembled into one history. */
class Collector {
  readonly ops: OpRecord[] = [];
  readonly handovers: HandoverRecord[] = [];
  readonly wants: WantRecord[] = [];
  readonly holds: HoldRecord[] = [];
  readonly stalls: ProcessOutage[] = [];

  constructor(private readonly nodes: number) {}

  /**
   * Reads one worker's journal (a kill -9 may have cut its last line short).
   * With `asOf`, mid-run: wants still outstanding last until then.
   */
  readJournal(worker: LineWorker, asOf?: number): void {
    let text = '';
    try {
      text = readFileSync(worker.journal, 'utf8');
    } catch {
      return; // a spare that never prepared
    }
    const openWants = new Map<string, { client: string; resources: readonly string[]; from: number }>();
    const releasing = new Map<string, ReleaseIntent>();
    const openHolds = new Map<string, Extract<FromWorker, { type: 'hold' }>>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let message: FromWorker;
      try {
        message = JSON.parse(line) as FromWorker;
      } catch {
        continue;
      }
      switch (message.type) {
        case 'op':
          this.ops.push(message.record);
          if (message.record.kind === 'release') releasing.delete(message.record.value);
          break;
        case 'releasing':
          releasing.set(message.record.value, message.record);
          break;
        case 'handover':
          this.handovers.push(message.record);
          break;
        case 'want':
          openWants.set(message.id, { client: message.client, resources: message.resources, from: message.at });
          break;
        case 'wanted': {
          const open = openWants.get(message.id);
          openWants.delete(message.id);
          if (open) this.wants.push({ id: message.id, ...open, process: worker.name, to: message.at, end: message.end });
          break;
        }
        case 'hold':
          openHolds.set(message.id, message);
          break;
        case 'stall':
          this.stalls.push({ process: worker.name, from: message.from, to: message.to });
          break;
        case 'unhold': {
          const hold = openHolds.get(message.id);
          openHolds.delete(message.id);
          if (hold === undefined) break;
          const validUntil = Math.max(hold.validUntil, message.validUntil);
          this.holds.push(holdRecord(hold, worker.name, Math.min(message.at, validUntil), message.at <= validUntil ? 'released' : 'expired'));
          break;
        }
        default:
          break;
      }
    }
    const killedAt = worker.killedAt;
    if (asOf !== undefined && killedAt === undefined) {
      for (const [id, open] of openWants) this.wants.push({ id, ...open, process: worker.name, to: asOf, end: 'gave-up' });
      return;
    }
    // Holds never released: the caller's belief ended with its validity, or its death if earlier.
    for (const hold of openHolds.values()) {
      const killedFirst = killedAt !== undefined && killedAt < hold.validUntil;
      this.holds.push(holdRecord(hold, worker.name, killedFirst ? killedAt : hold.validUntil, killedFirst ? 'killed' : 'expired'));
    }
    if (killedAt === undefined) return;
    // What the kill cut short: its outstanding wants end there, and a release
    // it sent but never saw decided counts as invoked when it was sent (the
    // holder let go then; the outcome is unknown, so no node outcomes: the
    // keys may still be there, and then expire by their TTL).
    for (const [id, open] of openWants) this.wants.push({ id, ...open, process: worker.name, to: killedAt, end: 'killed' });
    for (const intent of releasing.values()) {
      this.ops.push({
        id: `${intent.client}#release-cut-by-kill-${intent.value.slice(0, 8)}`,
        client: intent.client,
        kind: 'release',
        resources: intent.resources,
        value: intent.value,
        quorum: Math.floor(this.nodes / 2) + 1,
        invokedAt: intent.at,
        completedAt: killedAt,
        result: 'ok',
        nodes: [],
      });
    }
  }
}

function holdRecord(hold: Extract<FromWorker, { type: 'hold' }>, process: string, to: number, end: HoldRecord['end']): HoldRecord {
  return { id: hold.id, client: hold.client, process, value: hold.value, resources: hold.resources, from: hold.at, to, end };
}

export async function runLineScenario(cluster: ChaosCluster, spec: LineScenarioSpec): Promise<LineScenarioOutcome> {
  const seed = spec.seed ?? seedFromEnv();
  const rng = new Rng(seed);
  const [resource] = resourcesFor(spec.name, 1) as [string];
  const faults = new FaultLog();
  let handedOver = 0;
  /** Processes spawned and not yet accepted (ready, time base checked); `closing` once the run is over. */
  const starting = new Set<LineWorker>();
  let closing = false;
  const journals = mkdtempSync(join(tmpdir(), 'quorumlock-line-'));
  const all: LineWorker[] = [];
  const deviations: number[] = [];
  const problems: string[] = [];
  let named = 0;

  /**
   * A started worker whose time base agrees with ours. A process's
   * performance.timeOrigin is read at its start, and a start descheduled on a
   * loaded machine can be a few ms off: such a worker has done nothing yet,
   * so it is set aside (killed) and another started in its place. Three
   * starts in a row were off once at load 12 (3.6 ms, in 1 of 50 repeats of
   * the controls beside a loaded suite loop); each start is another draw, so
   * up to START_ATTEMPTS are made before the run is refused for its time base.
   */
  const startWorker = async (): Promise<LineWorker> => {
    for (let attempt = 1; ; attempt++) {
      const worker = await startProcess();
      const deviation = await worker.process.timeBaseDeviationMs();
      starting.delete(worker);
      if (closing) {
        worker.process.kill();
        throw new Error('the run is over');
      }
      if (deviation <= MAX_TIME_BASE_DEVIATION_MS || attempt === START_ATTEMPTS) {
        deviations.push(deviation);
        all.push(worker);
        return worker;
      }
      worker.process.kill();
    }
  };

  const startProcess = async (): Promise<LineWorker> => {
    const name = `w${named++}`;
    const worker = new LineWorker(name, join(journals, `${name}.jsonl`), () => (handedOver += 1));
    starting.add(worker);
    const lockers = [];
    for (let i = 0; i < spec.lockersPerProcess; i++) {
      const links = await cluster.openLinks();
      lockers.push(links.proxies.map((p, n) => ({ host: p.host, port: p.port, nodeName: cluster.nodeName(n) })));
    }
    const config: LineWorkerConfig = {
      name: worker.name,
      journal: worker.journal,
      seed: Math.floor(rng.next() * 2 ** 32),
      lockers,
      waitersPerLocker: spec.waitersPerLocker,
      resource,
      ...LINE_LOCKER,
      fencing: spec.fencing ?? LINE_LOCKER.fencing,
      acquireTimeoutMs: WAITER_ACQUIRE_TIMEOUT_MS,
      impatientChance: 0.1,
      impatientTimeoutMs: IMPATIENT_TIMEOUT_MS,
      shortHoldMs: 20,
      longHoldChance: 0.15,
      longHoldMs: [100, 400],
    };
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromWorker): void => {
        if (message.type !== 'ready') return;
        worker.process.child.off('exit', onExit);
        worker.process.child.off('message', onMessage);
        resolve();
      };
      const onExit = (): void => reject(new Error(`worker ${worker.name} exited before it was ready`));
      worker.process.child.on('message', onMessage);
      worker.process.child.once('exit', onExit);
    });
    worker.process.child.send({ type: 'prepare', config });
    await ready;
    return worker;
  };

  // Spares ready to go, and those still starting (a busy machine takes seconds to start one).
  const spares: LineWorker[] = [];
  const spareStarts = new Set<Promise<void>>();
  const addSpare = (): void => {
    const started = startWorker().then(
      (worker) => void spares.push(worker),
      (error: unknown) => {
        if (!closing) problems.push(`spare worker: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    spareStarts.add(started);
    void started.then(() => spareStarts.delete(started));
  };
  const go = (worker: LineWorker): void => {
    worker.running = true;
    worker.process.child.send({ type: 'go' });
  };

  let sampler: LineSnapshots | undefined;
  try {
    const first = await Promise.all(Array.from({ length: spec.processes }, () => startWorker()));
    for (let i = 0; i < spec.spares; i++) addSpare();
    await Promise.all(spareStarts);

    const controller = new AbortController();
    const signal = controller.signal;
    const progress = new Progress(spec.name, spec.budgetMs, () => handedOver);
    sampler = new LineSnapshots(cluster, resource);
    sampler.start();
    const proxyStalls = watchOwnStalls();
    const runStart = sharedNow();
    for (const worker of first) go(worker);

    /**
     * Kills `worker` and puts a ready spare in its place. Only with a spare
     * ready: otherwise contention would dwindle as kills outpace starts, and
     * the run would measure idle processes instead of wait lines.
     */
    const kill = (worker: LineWorker, kind: string, detail: string): boolean => {
      const spare = spares.shift();
      if (spare === undefined) return false;
      faults.instant(kind, worker.name, detail);
      // After the fault's time: its outstanding wants end at (not before) the loss they are part of.
      worker.killedAt = sharedNow();
      worker.process.kill();
      go(spare);
      addSpare();
      return true;
    };
    const running = (): LineWorker[] => all.filter((w) => w.canAct);
    // Waiters in line, not holding: the victims the wait lines must survive.
    const waitingOnly = (): LineWorker[] => running().filter((w) => w.waiting.size > 0 && w.held.size === 0);

    const stop = async (victim: LineWorker, pauseMs: number): Promise<void> => {
      victim.stopped = true;
      await faults.during(
        WAITER_STOP,
        victim.name,
        async () => {
          victim.process.pause();
          await sleep(pauseMs);
          if (victim.killedAt === undefined) victim.process.resume();
        },
        `${pauseMs} ms, ${victim.waiting.size} waiting`,
      );
      victim.stopped = false;
    };
    const processRng = rng.fork();
    // In turns from a random start, so that a run of a few faults sees every kind.
    const kinds = processRng.sample(
      [...(spec.waiterKills ? ['waiterKill'] : []), ...(spec.holderKills ? ['holderKill'] : []), ...(spec.waiterStops ? ['waiterStop'] : [])],
      3,
    );
    let turn = 0;
    const nemeses: Promise<void>[] = [];
    // One process fault at a time, each followed by more quiet than the bound:
    // the line must recover from each loss on its own, and the liveness figure
    // (measured from the last loss) keeps its teeth. Faults every few hundred
    // ms would restart its measurement so often that a stall would hide.
    if (kinds.length > 0) {
      const step = async (): Promise<void> => {
        switch (kinds[turn++ % kinds.length]) {
          case 'waiterKill': {
            const victim = pickFrom(processRng, waitingOnly());
            if (victim) kill(victim, WAITER_KILL, `${victim.waiting.size} waiting`);
            return;
          }
          case 'holderKill': {
            const victim = await firstHolder(running, signal);
            if (victim) kill(victim, HOLDER_KILL, `holding, ${victim.waiting.size - victim.held.size} waiting`);
            return;
          }
          default: {
            const victim = pickFrom(processRng, waitingOnly());
            // Within the lease the places are kept; beyond it they pass and the line skips them.
            if (victim) await stop(victim, processRng.chance(0.5) ? processRng.int(100, 400) : processRng.int(800, 1_500));
            return;
          }
        }
      };
      nemeses.push(loop(signal, processRng, [1_200, 2_500], step, [300, 800]));
    }
    if (spec.nodeFaults) nemeses.push(nodeFaults(cluster, faults, rng.fork(), signal));
    let squatting: Promise<void> | undefined;
    if (spec.squatMs !== undefined) {
      // The figure so far, on the journals as of a moment ago: a stall still under way then has been written since.
      const figureSoFar = (): number => {
        const asOf = sharedNow() - SQUAT_LOOKBACK_MS;
        const sofar = new Collector(cluster.size);
        for (const worker of all) sofar.readJournal(worker, asOf);
        const history: History = { ops: sofar.ops, handovers: sofar.handovers, faults: faults.records(), wants: sofar.wants };
        return measureLiveness(history, { resource, run: { from: runStart, to: asOf }, outages: processOutages(history.faults), stalls: sofar.stalls, standstills: proxyStalls.peek(), excluded: [] }).longestMs;
      };
      squatting = squat(cluster, resource, spec.squatMs, faults, signal, figureSoFar);
      nemeses.push(squatting);
    }

    await sleep(spec.budgetMs);
    // A squat runs on past the budget until it has built what it is for (or for squatMs at most).
    await squatting;
    controller.abort();
    const runEnd = sharedNow();
    const harnessStalls = proxyStalls.stop();
    for (const result of await Promise.allSettled(nemeses)) {
      if (result.status === 'rejected') problems.push(`nemesis: ${String((result.reason as Error)?.stack ?? result.reason)}`);
    }
    // Spares still starting would only make the stop wait: they have done nothing yet.
    closing = true;
    for (const worker of starting) worker.process.kill();
    await Promise.all(spareStarts);
    const alive = all.filter((w) => w.killedAt === undefined);
    await Promise.all(alive.map((w) => stopWorker(w, problems)));
    const snapshots = await sampler.stop();
    progress.stop();
    const collector = new Collector(cluster.size);
    for (const worker of all) collector.readJournal(worker);

    const history: History = {
      ops: collector.ops,
      handovers: collector.handovers,
      faults: faults.records(),
      wants: collector.wants,
      snapshots,
      holds: collector.holds,
      stalls: collector.stalls,
    };
    const check = checkHistory(history);
    // Callers handed one lock in-process share its value, so the value-level check cannot tell them apart.
    const holdOverlaps = overlappingHolds(collector.holds).map((overlap) => formatHoldOverlap(overlap, runStart));
    problems.push(...holdOverlaps);
    const run = { from: runStart, to: runEnd };
    const outages = processOutages(history.faults);
    const nodeWindows = nodeFaultWindows(history.faults);
    const stalls = collector.stalls;
    const liveness: LineLiveness = {
      stalledMs: unexplainedStallMs(stalls, outages),
      harnessStalledMs: harnessStalls.reduce((sum, s) => sum + (s.to - s.from), 0),
      healthy: measureLiveness(history, {
        resource,
        run,
        outages,
        stalls,
        standstills: harnessStalls,
        excluded: nodeWindows.map((w) => ({ from: w.from, to: w.to + NODE_FAULT_SETTLE_MS })),
      }),
      quorumUp: measureLiveness(history, { resource, run, outages, stalls, standstills: harnessStalls, excluded: withoutQuorum(nodeWindows, cluster.size) }),
      boundMs: LIVENESS_BOUND_MS,
    };
    const timeBaseDeviationMs = Math.max(0, ...deviations);
    if (timeBaseDeviationMs > MAX_TIME_BASE_DEVIATION_MS) {
      problems.push(`time base: a worker's clock base is ${timeBaseDeviationMs.toFixed(3)} ms off ours; cross-process windows cannot be compared`);
    }
    const stats = alive.flatMap((w) => (w.stats ? [w.stats] : []));
    const summary = summarize({
      scenario: spec.name,
      kind: spec.squatMs === undefined ? 'safe' : 'negative',
      rules: spec.rules,
      seed,
      budgetMs: spec.budgetMs,
      clients: spec.processes * spec.lockersPerProcess * spec.waitersPerLocker,
      processes: all.filter((w) => w.running).length,
      history,
      check,
      timeBaseDeviationMs,
      unexpectedErrors: [...problems, ...stats.flatMap((s) => s.unexpected), ...alive.flatMap((w) => w.unhandled)],
      liveness: {
        longestMs: liveness.healthy.longestMs,
        boundMs: LIVENESS_BOUND_MS,
        limitMs: LIVENESS_LIMIT_MS,
        coveredMs: liveness.healthy.coveredMs,
        losses: liveness.healthy.losses,
        stalledMs: liveness.stalledMs,
        ...(spec.nodeFaults ? { quorumUpLongestMs: liveness.quorumUp.longestMs, quorumUpLimitMs: WAITER_ACQUIRE_TIMEOUT_MS } : {}),
      },
    });
    progress.done(summary);
    return { summary, history, check, holdOverlaps, liveness, timeBaseDeviationMs, processesStarted: all.length };
  } finally {
    await sampler?.stop();
    killAllWorkers();
    await cluster.closeScenario();
    rmSync(journals, { recursive: true, force: true });
  }
}

/**
 * Times this process's event loop did not run. Every locker reaches the nodes
 * through proxies in this process: while it is descheduled, no request or
 * announcement moves, as if the network stopped. The liveness figure takes
 * those windows out of its stretches (check/liveness.ts: standstills).
 */
function watchOwnStalls(tickMs = 10, stallMs = 50): { peek(): readonly Interval[]; stop(): Interval[] } {
  const stalls: Interval[] = [];
  let last = sharedNow();
  const timer = setInterval(() => {
    const now = sharedNow();
    if (now - last > stallMs) stalls.push({ from: last + tickMs, to: now });
    last = now;
  }, tickMs);
  timer.unref();
  return {
    peek: () => stalls,
    stop() {
      clearInterval(timer);
      return stalls;
    },
  };
}

/** Runs `step` after quiet times drawn from `spacing` (the first from `first`) until the signal aborts. */
async function loop(
  signal: AbortSignal,
  rng: Rng,
  spacing: readonly [number, number],
  step: () => Promise<void>,
  first: readonly [number, number] = spacing,
): Promise<void> {
  let quiet = first;
  while (!signal.aborted) {
    await sleep(rng.int(quiet[0], quiet[1]), signal);
    quiet = spacing;
    if (signal.aborted) return;
    await step();
  }
}

function pickFrom<T>(rng: Rng, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : rng.pick(items);
}

/** The first worker seen holding the lock within a second (holds are short: look often). */
async function firstHolder(running: () => LineWorker[], signal: AbortSignal): Promise<LineWorker | undefined> {
  const until = sharedNow() + 1_000;
  while (!signal.aborted && sharedNow() < until) {
    const holder = running().find((w) => w.held.size > 0);
    if (holder) return holder;
    await sleep(2);
  }
  return undefined;
}

async function stopWorker(worker: LineWorker, problems: string[]): Promise<void> {
  if (worker.stopped) worker.process.resume();
  worker.process.child.send({ type: 'stop' });
  const exited = new Promise<void>((resolve) => {
    if (worker.process.child.exitCode !== null) resolve();
    else worker.process.child.once('exit', () => resolve());
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 30_000)));
  const outcome = await Promise.race([Promise.all([worker.done, exited]), timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') problems.push(`worker ${worker.name} did not stop within 30 s`);
  else if (worker.process.child.exitCode !== 0) problems.push(`worker ${worker.name} exited with ${worker.process.child.exitCode ?? worker.process.child.signalCode}`);
}

/**
 * kill -9 (restarted empty after more than the TTL) or SIGSTOP (for 1.5 TTL)
 * one node, sometimes two, with quiet times between: a quorum always stays
 * up, and there are healthy stretches to measure liveness in.
 */
async function nodeFaults(cluster: ChaosCluster, faults: FaultLog, rng: Rng, signal: AbortSignal): Promise<void> {
  const ttlMs = LINE_LOCKER.ttlMs;
  // The first soon, so that the short budget of `npm test` sees one too.
  const step = async (): Promise<void> => {
    const up = cluster.set.nodes.flatMap((node, i) => (node.isRunning && !node.isPaused ? [i] : []));
    const victims = rng.sample(up, rng.chance(0.25) ? 2 : 1);
    await Promise.all(
      victims.map(async (i) => {
        const node = cluster.set.node(i);
        if (rng.chance(0.5)) {
          const downMs = ttlMs + rng.int(100, 400);
          // Not cut short by the end of the run: an early restart would break Redlock's assumption.
          await faults.during(
            NODE_KILL,
            cluster.nodeName(i),
            async () => {
              await node.kill();
              await sleep(downMs);
              await node.restart({ empty: true });
            },
            `down ${downMs} ms, restarted empty`,
          );
        } else {
          const pauseMs = Math.floor(ttlMs * 1.5);
          await faults.during(
            NODE_STOP,
            cluster.nodeName(i),
            async () => {
              await node.pause();
              await sleep(pauseMs);
              await node.resume();
            },
            `${pauseMs} ms`,
          );
        }
      }),
    );
  };
  await loop(signal, rng, [1_200, 2_500], step, [200, 600]);
}

/** How far behind the squatter reads the journals: a stall is written once its process runs again. */
const SQUAT_LOOKBACK_MS = 300;
/** Past the limit by this much, the figure stays past it once the line takes the key after the squat. */
const SQUAT_TARGET_MS = LIVENESS_LIMIT_MS + 500;

/**
 * Sets the key on every node, as no locker would: the line can only wait it
 * out. It keeps the key until the liveness figure so far is past its limit
 * (on a loaded machine, moments when every waiter's process is descheduled
 * cut the stretch: a fixed 4 s squat once measured 1.3 s), or `maxMs`.
 */
async function squat(cluster: ChaosCluster, resource: string, maxMs: number, faults: FaultLog, signal: AbortSignal, figureSoFar: () => number): Promise<void> {
  const admins = cluster.set.nodes.map((_, i) => cluster.admin(i));
  await Promise.all(admins.map((admin) => (admin.status === 'ready' ? undefined : new Promise((resolve) => admin.once('ready', resolve)))));
  await sleep(500, signal);
  if (signal.aborted) return;
  const squatStart = performance.now();
  const end = faults.begin('squatter', 'all nodes', `SET ${resource} PX ${maxMs}, kept until the figure passed ${SQUAT_TARGET_MS} ms`);
  try {
    await Promise.all(admins.map((admin) => admin.set(resource, 'squatter', 'PX', maxMs)));
    let figure = 0;
    while (performance.now() - squatStart < maxMs && !signal.aborted) {
      await sleep(100);
      figure = figureSoFar();
      if (figure > SQUAT_TARGET_MS) break;
    }
    console.log(`[chaos] squatter: kept the key ${(performance.now() - squatStart).toFixed(0)} ms, until the figure so far was ${figure.toFixed(0)} ms`);
  } finally {
    // Only the squatter's value is ever there: no locker takes a key that exists.
    await Promise.all(admins.map((admin) => admin.del(resource)));
    end();
  }
}

/** Stall time beyond the SIGSTOPs that explain some of it (a stopped process's loop does not run either). */
function unexplainedStallMs(stalls: readonly ProcessOutage[], outages: readonly ProcessOutage[]): number {
  let total = 0;
  for (const stall of stalls) {
    const own = outages.filter((o) => o.process === stall.process);
    for (const left of subtract([stall], own)) total += left.to - left.from;
  }
  return total;
}

/** When each process could not act: SIGSTOPped, or killed (for good). */
export function processOutages(faults: readonly FaultRecord[]): ProcessOutage[] {
  return faults.flatMap((f) => {
    if (f.kind === WAITER_KILL || f.kind === HOLDER_KILL) return [{ process: f.target, from: f.from, to: Infinity }];
    if (f.kind === WAITER_STOP) return [{ process: f.target, from: f.from, to: f.to }];
    return [];
  });
}

/** When each node fault was active, with the node it hit. */
export function nodeFaultWindows(faults: readonly FaultRecord[]): (Interval & { node: string })[] {
  return faults.filter((f) => f.kind === NODE_KILL || f.kind === NODE_STOP).map((f) => ({ node: f.target, from: f.from, to: f.to }));
}
