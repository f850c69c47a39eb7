/**
 * Runs an orchestrated negative control: a few ObservedRedlock lockers and a
 * script of steps that breaks one of Redlock's assumptions on purpose. The
 * history is checked like any other; the control passes only when the
 * checker reports the overlap (and nothing else goes wrong).
 */
import type { Redis } from 'ioredis';
import { type CheckResult, checkHistory } from '../check/checker.js';
import { FaultLog } from '../history/FaultLog.js';
import { HistoryBuffer, ObservedRedlock, type ObserverOptions } from '../history/ObservedRedlock.js';
import type { History } from '../history/types.js';
import type { ChaosCluster, Links } from './cluster.js';
import { DEFAULT_LOCKER, type LockerSettings, redlockOptions, resourcesFor, waitReady } from './scenario.js';
import { sleep } from './sleep.js';
import { type ScenarioSummary, summarize } from './summary.js';

export interface ControlContext {
  readonly cluster: ChaosCluster;
  readonly faults: FaultLog;
  /** Lockers a, b, ... (labels 'A', 'B', ...), each through its own links. */
  readonly lockers: readonly ObservedRedlock[];
  /** Each locker's links (proxies) to the nodes, in locker order. */
  readonly links: readonly Links[];
  readonly resource: string;
  /** Records a hold re-entered on a held lock (they make no round the lockers could record). */
  readonly reentries: HistoryBuffer;
  /** Says how the steps produced the violation (shown with the outcome). */
  note(step: string): void;
  /** Waits until none of the nodes `indexes` has the key `resource` (the lock is gone there), or fails. */
  untilGoneFrom(indexes: readonly number[], withinMs: number): Promise<void>;
}

export interface ControlSpec {
  readonly name: string;
  readonly rules: readonly number[];
  readonly lockers?: number;
  readonly locker?: Partial<LockerSettings>;
  /** Builds a locker other than the plain ObservedRedlock (a cheating one); undefined: the plain one. */
  readonly makeLocker?: (build: LockerBuild) => Promise<ObservedRedlock | undefined>;
}

/** What a control's locker is built from. */
export interface LockerBuild {
  readonly index: number;
  readonly cluster: ChaosCluster;
  readonly clients: readonly Redis[];
  readonly options: ReturnType<typeof redlockOptions>;
  readonly observer: ObserverOptions;
}

export interface ControlOutcome {
  readonly summary: ScenarioSummary;
  readonly history: History;
  readonly check: CheckResult;
  /** How the steps produced the violation, step by step. */
  readonly construction: readonly string[];
}

export async function runControl(
  cluster: ChaosCluster,
  spec: ControlSpec,
  steps: (ctx: ControlContext) => Promise<void>,
): Promise<ControlOutcome> {
  const settings = { ...DEFAULT_LOCKER, ...spec.locker };
  const buffer = new HistoryBuffer();
  const faults = new FaultLog();
  const all: Redis[] = [];
  const unexpected: string[] = [];
  const construction: string[] = [];
  try {
    const lockers: ObservedRedlock[] = [];
    const lockerLinks: Links[] = [];
    for (let i = 0; i < (spec.lockers ?? 2); i++) {
      const links = await cluster.openLinks();
      lockerLinks.push(links);
      const clients = cluster.clientsThrough(links);
      all.push(...clients);
      await waitReady(clients);
      const label = String.fromCharCode(65 + i);
      const options = redlockOptions(settings);
      const observer: ObserverOptions = { client: label, sink: buffer, nodeNames: links.nodeNames };
      const made = await spec.makeLocker?.({ index: i, cluster, clients, options, observer });
      lockers.push(made ?? new ObservedRedlock(clients, options, observer));
    }
    const [resource] = resourcesFor(spec.name, 1) as [string];
    const note = (step: string): void => {
      construction.push(step);
    };
    const untilGoneFrom = async (indexes: readonly number[], withinMs: number): Promise<void> => {
      const admins = indexes.map((i) => cluster.admin(i));
      await waitReady(admins);
      const started = performance.now();
      for (;;) {
        const present = await Promise.all(admins.map((admin) => admin.exists(resource)));
        if (present.every((n) => n === 0)) {
          note(`${resource} gone from ${indexes.map((i) => cluster.nodeName(i)).join(', ')} after ${(performance.now() - started).toFixed(0)} ms`);
          return;
        }
        if (performance.now() - started > withinMs) throw new Error(`${resource} still on ${indexes.filter((_, k) => present[k] !== 0).map((i) => cluster.nodeName(i)).join(', ')} after ${withinMs} ms`);
        await sleep(5);
      }
    };
    await steps({ cluster, faults, lockers, links: lockerLinks, resource, reentries: buffer, note, untilGoneFrom }).catch((error: unknown) => {
      unexpected.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
    });
  } finally {
    await cluster.closeScenario(all);
  }
  const history: History = { ops: buffer.ops, handovers: buffer.handovers, faults: faults.records(), reentries: buffer.reentries };
  const check = checkHistory(history);
  const summary = summarize({
    scenario: spec.name,
    kind: 'negative',
    rules: spec.rules,
    clients: spec.lockers ?? 2,
    history,
    check,
    unexpectedErrors: unexpected,
  });
  return { summary, history, check, construction };
}
