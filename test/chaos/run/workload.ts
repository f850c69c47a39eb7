/**
 * One contending client: until `signal` aborts, it picks an action and runs
 * it against a few shared resources through the public Locker API. The
 * history comes from the ObservedRedlock; this only drives it and counts what
 * the caller saw. Errors the API documents for these calls are expected;
 * anything else is collected as `unexpected` and fails the scenario.
 */
import { ErrorCode, isQuorumLockError, type Lock, type Locker } from '../../../src/index.js';
import type { Rng } from './rng.js';
import { sleep } from './sleep.js';

export type Action = 'hold' | 'extend' | 'try' | 'using' | 'multi' | 'overstay';

export interface WorkloadConfig {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  /** A normal hold lasts 0..maxHoldMs. */
  readonly maxHoldMs: number;
  readonly acquireTimeoutMs: number;
  /** Relative weights of the actions. */
  readonly mix: Readonly<Record<Action, number>>;
}

/**
 * The default mix: mostly short holds, some extends, using() runs (a few
 * long enough to be auto-extended), a few multi-resource locks, and a few holders
 * that keep the lock to the very end of its validity and only then extend
 * (refused locally) and release (compare-and-delete must spare the next
 * holder's key: rule 6).
 */
export const DEFAULT_MIX: Readonly<Record<Action, number>> = Object.freeze({
  hold: 45,
  extend: 15,
  try: 15,
  using: 15,
  multi: 8,
  overstay: 2,
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
  return { actions: 0, acquired: 0, contended: 0, failed: 0, extended: 0, extendRefused: 0, signalAborted: 0, unexpected: [] };
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
    total.unexpected.push(...s.unexpected);
  }
  return total;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}${isQuorumLockError(error) ? ` ${error.code}` : ''}: ${error.message}`;
  return String(error);
}
