/**
 * Safe scenarios of the semaphore and the read-write lock: lockers in this
 * process, each through its own proxies, take permits (or read and write
 * locks) of one resource for the budget while the nemeses inject faults;
 * every hold is recorded as a window (check/permits.ts) and checked: never
 * more than the limit at once, never a writer beside anyone.
 */
import type { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, type Lock } from '../../../src/index.js';
import { exclusiveOverlaps, type HoldWindow, mostHeld } from '../check/permits.js';
import { FaultLog } from '../history/FaultLog.js';
import { fromMonotonic, sharedNow } from '../history/timeBase.js';
import type { ChaosCluster } from './cluster.js';
import type { Nemesis } from './nemeses.js';
import { Rng, seedFromEnv } from './rng.js';
import { waitReady } from './scenario.js';
import { sleep } from './sleep.js';

export const PERMIT_TTL_MS = 600;
export const PERMIT_LOCKER_OPTIONS = Object.freeze({
  nodeTimeoutMs: 80,
  acquireTimeoutMs: 1_500,
  retry: { baseDelayMs: 10, maxDelayMs: 100 },
});
const MAX_HOLD_MS = 5;

/** What one attempt asks for: the locker to ask, and what the hold counts as. */
export interface Take {
  readonly acquire: (ttlMs: number) => Promise<Lock>;
  readonly tryAcquire: (ttlMs: number) => Promise<Lock | null>;
  readonly permits: number;
  readonly exclusive: boolean;
}

export interface PermitScenario {
  readonly name: string;
  readonly clients: number;
  readonly budgetMs: number;
  readonly nemeses: readonly Nemesis[];
  /** The chooser of one client, given its ioredis clients (one per node). */
  readonly client: (clients: Redis[]) => (rng: Rng) => Take;
  readonly keyPattern: string;
}

export interface PermitOutcome {
  readonly acquisitions: number;
  readonly refused: number;
  readonly windows: readonly HoldWindow[];
  readonly unexpected: readonly string[];
  readonly faults: number;
}

const EXPECTED: ReadonlySet<string> = new Set([
  ErrorCode.LOCK_HELD,
  ErrorCode.QUORUM_UNREACHABLE,
  ErrorCode.VALIDITY_EXHAUSTED,
  ErrorCode.LOCK_LOST,
  ErrorCode.LOCK_EXPIRED,
  ErrorCode.ABORTED,
]);

export async function runPermitScenario(cluster: ChaosCluster, scenario: PermitScenario): Promise<PermitOutcome> {
  const rng = new Rng(seedFromEnv());
  const faults = new FaultLog();
  const windows: HoldWindow[] = [];
  const unexpected: string[] = [];
  const counts = { acquisitions: 0, refused: 0 };
  const all: Redis[] = [];
  const controller = new AbortController();
  try {
    const choosers = [];
    for (let i = 0; i < scenario.clients; i++) {
      const clients = cluster.clientsThrough(await cluster.openLinks());
      all.push(...clients);
      await waitReady(clients);
      choosers.push(scenario.client(clients));
    }
    const expected = (error: unknown): boolean => {
      if (isQuorumLockError(error) && EXPECTED.has(error.code)) return true;
      unexpected.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
      return false;
    };
    const work = choosers.map(async (choose, i) => {
      const own = rng.fork();
      while (!controller.signal.aborted) {
        const take = choose(own);
        let lock: Lock | null;
        try {
          lock = own.chance(0.3) ? await take.tryAcquire(PERMIT_TTL_MS) : await take.acquire(PERMIT_TTL_MS);
        } catch (error) {
          if (expected(error)) counts.refused++;
          continue;
        }
        if (lock === null) {
          counts.refused++;
          continue;
        }
        const from = sharedNow();
        counts.acquisitions++;
        await sleep(own.int(0, MAX_HOLD_MS));
        if (own.chance(0.2)) await lock.extend(PERMIT_TTL_MS).catch(expected);
        await sleep(own.int(0, MAX_HOLD_MS));
        windows.push({ holder: `c${i}:${lock.value.slice(-6)}`, permits: take.permits, exclusive: take.exclusive, from, to: Math.min(sharedNow(), fromMonotonic(lock.validUntil)) });
        await lock.release();
      }
    });
    const nemeses = scenario.nemeses.map((n) =>
      n.run({ cluster, faults, rng: rng.fork(), signal: controller.signal, maxTtlMs: PERMIT_TTL_MS, keyPattern: scenario.keyPattern }),
    );
    await sleep(scenario.budgetMs);
    controller.abort();
    await Promise.all(work);
    for (const result of await Promise.allSettled(nemeses)) if (result.status === 'rejected') unexpected.push(`nemesis: ${String(result.reason)}`);
  } finally {
    await cluster.closeScenario(all);
  }
  return { ...counts, windows, unexpected, faults: faults.records().length };
}

/** The findings of a semaphore history: empty when safe. */
export function semaphoreFindings(windows: readonly HoldWindow[], limit: number): string[] {
  const most = mostHeld(windows);
  return most.most > limit ? [`${most.most} permits held at once (limit ${limit}) by ${most.holders.join(', ')}`] : [];
}

/** The findings of a read-write lock history: empty when safe. */
export function readWriteFindings(windows: readonly HoldWindow[]): string[] {
  return exclusiveOverlaps(windows).map(([a, b]) => `${a.holder}${a.exclusive ? ' (writer)' : ''} overlaps ${b.holder}${b.exclusive ? ' (writer)' : ''} by ${(a.to - b.from).toFixed(1)} ms`);
}
