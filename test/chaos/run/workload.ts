/**
 * One contending client: until `signal` aborts, it picks an action and runs
 * it against a few shared resources through the public Locker API. The
 * history comes from the ObservedRedlock; this only drives it and counts what
 * the caller saw. Errors the API documents for these calls are expected;
 * anything else is collected as `unexpected` and fails the scenario.
 */
import { ErrorCode, isQuorumLockError, type Lock, type Locker } from '../../../src/index.js';
import { fromMonotonic, sharedNow } from '../history/timeBase.js';
import type { ReentryRecord } from '../history/types.js';
import type { Rng } from './rng.js';
import { sleep } from './sleep.js';

export type Action = 'hold' | 'extend' | 'try' | 'using' | 'multi' | 'overstay' | 'reenter';

export interface WorkloadConfig {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  /** A normal hold lasts 0..maxHoldMs. */
  readonly maxHoldMs: number;
  readonly acquireTimeoutMs: number;
  /** Relative weights of the actions. */
  readonly mix: Readonly<Record<Action, number>>;
  /** Where 'reenter' records its holds, and the other locker that re-enters by value (none: nested holds only). */
  readonly reentry?: Reentry;
}

export interface Reentry {
  /** This client's label in the history. */
  readonly client: string;
  /** Another locker, on connections of its own: it re-enters by value, as a second process would. */
  readonly peer?: Locker;
  record(reentry: ReentryRecord): void;
}

/**
 * The default mix: mostly short holds, some extends, using() runs (a few
 * long enough to be auto-extended), a few multi-resource locks, and a few holders
 * that keep the lock to the very end of its validity and only then extend
 * (refused locally) and release (compare-and-delete must spare the next
 * holder's key: rule 6), and re-entered locks: nested holds whose inner
 * releases give back only their own hold, and re-entry by value from another
 * locker.
 */
export const DEFAULT_MIX: Readonly<Record<Action, number>> = Object.freeze({
  hold: 40,
  extend: 15,
  try: 15,
  using: 15,
  multi: 8,
  overstay: 2,
  reenter: 5,
});

export interface ClientStats {
  actions: number;
  /** Locks the caller received. */
  acquired: number;
  /** acquire() gave up on a held resource, or tryAcquire() returned null. */
  contended: number;
  /** acquire() gave up on unreachable nodes or used-up validity. */
  failed: number;
  extended: number;
  /** Extends refused: lost, expired, or no quorum in time. */
  extendRefused: number;
  /** using() routines whose lock signal aborted before they finished. */
  signalAborted: number;
  /** Holds re-entered on a held lock: nested, and by value from another locker. */
  reenteredNested: number;
  reenteredByValue: number;
  /** Re-entries refused: the lock was lost or expired meanwhile, or too few nodes answered. */
  reenterRefused: number;
  unexpected: string[];
}

const EXPECTED_ACQUIRE: ReadonlySet<string> = new Set([
  ErrorCode.LOCK_HELD,
  ErrorCode.QUORUM_UNREACHABLE,
  ErrorCode.VALIDITY_EXHAUSTED,
  ErrorCode.ABORTED,
]);
const EXPECTED_EXTEND: ReadonlySet<string> = new Set([
  ErrorCode.LOCK_LOST,
  ErrorCode.LOCK_EXPIRED,
  ErrorCode.QUORUM_UNREACHABLE,
  ErrorCode.VALIDITY_EXHAUSTED,
]);

export function emptyStats(): ClientStats {
  return { actions: 0, acquired: 0, contended: 0, failed: 0, extended: 0, extendRefused: 0, signalAborted: 0, reenteredNested: 0, reenteredByValue: 0, reenterRefused: 0, unexpected: [] };
}

export async function runClient(locker: Locker, config: WorkloadConfig, rng: Rng, signal: AbortSignal): Promise<ClientStats> {
  const stats = emptyStats();
  const client = new Client(locker, config, rng, signal, stats);
  while (!signal.aborted) {
    stats.actions += 1;
    try {
      await client.run(rng.weighted(config.mix));
    } catch (error) {
      if (isQuorumLockError(error) && EXPECTED_ACQUIRE.has(error.code)) {
        if (error.code === ErrorCode.LOCK_HELD) stats.contended += 1;
        else if (error.code !== ErrorCode.ABORTED) stats.failed += 1;
      } else {
        stats.unexpected.push(describeError(error));
      }
    }
  }
  return stats;
}

class Client {
  constructor(
    private readonly locker: Locker,
    private readonly config: WorkloadConfig,
    private readonly rng: Rng,
    private readonly signal: AbortSignal,
    private readonly stats: ClientStats,
  ) {}

  async run(action: Action): Promise<void> {
    const { ttlMs, acquireTimeoutMs } = this.config;
    const options = { acquireTimeoutMs, signal: this.signal };
    switch (action) {
      case 'hold': {
        const lock = await this.acquired(this.locker.acquire(this.resource(), ttlMs, options));
        await this.hold();
        await lock.release();
        return;
      }
      case 'extend': {
        const lock = await this.acquired(this.locker.acquire(this.resource(), ttlMs, options));
        await this.hold();
        await this.extend(lock);
        await this.hold();
        await lock.release();
        return;
      }
      case 'try': {
        const lock = await this.locker.tryAcquire(this.resource(), ttlMs);
        if (lock === null) {
          this.stats.contended += 1;
          await this.hold(); // no busy loop on a held resource
          return;
        }
        this.stats.acquired += 1;
        await this.hold();
        await lock.release();
        return;
      }
      case 'using': {
        // Mostly short; one in five runs 0.6-1.3 TTL and is auto-extended (rule 7) while others wait.
        const runMs = this.rng.chance(0.2)
          ? this.rng.int(Math.floor(ttlMs * 0.6), Math.floor(ttlMs * 1.3))
          : this.rng.int(0, this.config.maxHoldMs);
        await this.locker.using(
          this.resource(),
          ttlMs,
          async (lockSignal) => {
            this.stats.acquired += 1;
            await sleep(runMs, lockSignal);
            if (lockSignal.aborted) this.stats.signalAborted += 1;
          },
          options,
        );
        return;
      }
      case 'multi': {
        const keys = this.rng.sample(this.config.resources, 2);
        const lock = await this.acquired(this.locker.acquire(keys, ttlMs, options));
        await this.hold();
        await lock.release();
        return;
      }
      case 'overstay': {
        // Hold right up to the end of the validity (after an extend half the time, rule 7), so the
        // next holder gets in as soon as the keys expire; then extend (refused locally) and
        // release late: the compare-and-delete must spare the next holder's key (rule 6).
        const lock = await this.acquired(this.locker.acquire(this.resource(), ttlMs, options));
        if (this.rng.chance(0.5)) await this.extend(lock);
        await sleep(lock.remainingMs() + 20);
        await this.extend(lock);
        await lock.release();
        return;
      }
      case 'reenter':
        await this.reenter(ttlMs, options);
        return;
    }
  }

  /**
   * A lock held by hand, re-entered in its scope by a using() and, inside
   * that, by an acquire(): the inner ones give back their own holds first,
   * and the keys stay the outer lock's (the checker would see anyone else
   * take them before its release). Then the peer re-enters it by value and
   * lets go before the owner releases.
   */
  private async reenter(ttlMs: number, options: { acquireTimeoutMs: number; signal: AbortSignal }): Promise<void> {
    const resource = this.resource();
    const lock = await this.acquired(this.locker.acquire(resource, ttlMs, options));
    try {
      await this.refusedIfLost(() =>
        lock.scope(() =>
          this.locker.using(
            resource,
            ttlMs,
            async (_signal, inner) => {
              const from = sharedNow();
              await this.hold();
              const innermost = await this.locker.acquire(resource, ttlMs, options);
              await this.held(innermost, false);
              await this.hold();
              this.reentered(inner, false, from);
            },
            options,
          ),
        ),
      );
      const peer = this.config.reentry?.peer;
      if (peer !== undefined) {
        await this.refusedIfLost(async () => {
          const byValue = await peer.reenter(resource, lock.value);
          await this.held(byValue, true);
        });
      }
    } finally {
      await lock.release();
    }
  }

  /** Holds a re-entered handle for a while, then gives its hold back, and records it. */
  private async held(handle: Lock, byValue: boolean): Promise<void> {
    const from = sharedNow();
    await this.hold();
    this.reentered(handle, byValue, from);
    await handle.release();
  }

  private reentered(handle: Lock, byValue: boolean, from: number): void {
    const record = this.config.reentry;
    if (byValue) this.stats.reenteredByValue += 1;
    else this.stats.reenteredNested += 1;
    record?.record({
      client: record.client,
      value: handle.value,
      resources: [...handle.resources],
      byValue,
      from,
      to: Math.min(sharedNow(), fromMonotonic(handle.validUntil)),
    });
  }

  /** A re-entry refused because the lock was lost, expired or out of reach is expected under faults. */
  private async refusedIfLost(reentry: () => Promise<void>): Promise<void> {
    try {
      await reentry();
    } catch (error) {
      if (isQuorumLockError(error) && (EXPECTED_EXTEND.has(error.code) || EXPECTED_ACQUIRE.has(error.code))) this.stats.reenterRefused += 1;
      else throw error;
    }
  }

  private async acquired(pending: Promise<Lock>): Promise<Lock> {
    const lock = await pending;
    this.stats.acquired += 1;
    return lock;
  }

  private async extend(lock: Lock): Promise<void> {
    try {
      await lock.extend(this.config.ttlMs);
      this.stats.extended += 1;
    } catch (error) {
      if (isQuorumLockError(error) && EXPECTED_EXTEND.has(error.code)) this.stats.extendRefused += 1;
      else this.stats.unexpected.push(describeError(error));
    }
  }

  private hold(): Promise<void> {
    return sleep(this.rng.int(0, this.config.maxHoldMs));
  }

  private resource(): string {
    return this.rng.pick(this.config.resources);
  }
}

export function mergeStats(all: readonly ClientStats[]): ClientStats {
  const total = emptyStats();
  for (const s of all) {
    total.actions += s.actions;
    total.acquired += s.acquired;
    total.contended += s.contended;
    total.failed += s.failed;
    total.extended += s.extended;
    total.extendRefused += s.extendRefused;
    total.signalAborted += s.signalAborted;
    total.reenteredNested += s.reenteredNested;
    total.reenteredByValue += s.reenteredByValue;
    total.reenterRefused += s.reenterRefused;
    total.unexpected.push(...s.unexpected);
  }
  return total;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}${isQuorumLockError(error) ? ` ${error.code}` : ''}: ${error.message}`;
  return String(error);
}
