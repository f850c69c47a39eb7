import type { CloseOptions, CloseSummary } from './Closing.js';
import type { Lock } from './Lock.js';
import type { Inspection } from './inspection.js';
import type { AcquireOptions, InspectOptions, TryAcquireOptions, UsingOptions } from './options.js';
import type { Resources } from './validate.js';

/** A routine run by using(): `signal` aborts when the lock is lost or expires. */
export type LockedRoutine<T> = (signal: AbortSignal, lock: Lock) => Promise<T> | T;

/** What RedisLock and Redlock both offer. */
export interface Locker {
  /** Waits per the retry policy until the lock is ours, or rejects with the last attempt's error. */
  acquire(resources: Resources, ttlMs: number, options?: AcquireOptions): Promise<Lock>;
  /** One attempt; resolves to null when another holder has the resource. */
  tryAcquire(resources: Resources, ttlMs: number, options?: TryAcquireOptions): Promise<Lock | null>;
  /**
   * Acquires, runs `routine` while extending the lock in the background, then
   * releases. Resolves or rejects as the routine does.
   */
  using<T>(resources: Resources, ttlMs: number, routine: LockedRoutine<T>, options?: UsingOptions): Promise<T>;
  /**
   * Re-enters a lock that another process (or another handle) holds, by its
   * value: checks on a quorum that every key holds `value`, and resolves to a
   * handle whose release() leaves the keys to their holder. Rejects with
   * LockLostError when they no longer hold it.
   */
  reenter(resources: Resources, value: string): Promise<Lock>;
  /**
   * Reads each node's state of `resources` without taking or changing
   * anything: the holder's value, its remaining TTL, the waiters in line,
   * and whether a quorum agrees on one holder. Every node request has the
   * locker's node timeout; each node's outcome is in the answer, which
   * never rejects for an outage.
   */
  inspect(resources: Resources, options?: InspectOptions): Promise<Inspection>;
  /**
   * Shuts the locker down: new acquires reject at once with
   * LockerClosedError, waiting ones reject with it and leave the wait
   * lines, renewals stop, and every lock it holds is released on every
   * node (a using() routine's signal aborts with that error). Resolves when
   * that has settled or `timeoutMs` ran out; never rejects for a node that
   * is down; a second call returns the same promise. The clients stay open.
   */
  close(options?: CloseOptions): Promise<CloseSummary>;
  /** `await using locker = …` calls close() when the block ends. */
  [Symbol.asyncDispose](): Promise<void>;
}
