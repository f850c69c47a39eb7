import type { CloseOptions, CloseSummary } from './Closing.js';
import type { Lock } from './Lock.js';
import type { Inspection } from './inspection.js';
import type { AcquireOptions, InspectOptions, TryAcquireOptions, UsingOptions } from './options.js';
import type { Resources } from './validate.js';

/** A routine run by using(): `signal` aborts when the lock is lost or expires. */
export type LockedRoutine<T> = (signal: AbortSignal, lock: Lock) => Promise<T> | T;

/** What RedisLock and Redlock both offer. */
export interface Locker {
  /**
   * Waits per the retry policy until the lock is ours, or rejects with the
   * last attempt's error once `retries` or `acquireTimeoutMs` are used up.
   * Inside a routine that holds the same resources through this locker, it
   * re-enters that lock instead (option `reentrant`).
   *
   * @param resources - A resource name, or several to lock together (all or none).
   * @param ttlMs - How long the lock is held unless extended, in milliseconds (a positive integer).
   * @param options - `signal`, and `acquireTimeoutMs` and `retry` for this call.
   * @returns The held {@link Lock}.
   * @throws {@link LockHeldError} when another holder kept it until the end;
   * {@link QuorumUnreachableError} when too few nodes answered;
   * {@link ValidityExhaustedError} when the round trips used up the validity;
   * {@link AbortedError} when `options.signal` aborts;
   * {@link OverlappingHoldError} inside a routine holding overlapping resources;
   * {@link InvalidArgumentError} for a bad argument (thrown before any request).
   */
  acquire(resources: Resources, ttlMs: number, options?: AcquireOptions): Promise<Lock>;
  /**
   * One attempt; resolves to null when another holder has the resource.
   *
   * @param resources - A resource name, or several to lock together (all or none).
   * @param ttlMs - How long the lock is held unless extended, in milliseconds (a positive integer).
   * @param options - `signal`.
   * @returns The held {@link Lock}, or null when the resource is held elsewhere.
   * @throws {@link QuorumUnreachableError}, {@link ValidityExhaustedError},
   * {@link AbortedError}, {@link OverlappingHoldError} or {@link InvalidArgumentError}, as acquire().
   */
  tryAcquire(resources: Resources, ttlMs: number, options?: TryAcquireOptions): Promise<Lock | null>;
  /**
   * Acquires, runs `routine` while extending the lock in the background, then
   * releases. Resolves or rejects as the routine does. Calls of this locker
   * inside `routine` for the same resources re-enter the lock.
   *
   * @param resources - A resource name, or several to lock together (all or none).
   * @param ttlMs - The lock's TTL in milliseconds; the auto-extension renews it (option `extendAtFraction`).
   * @param routine - Called with the lock's `signal`, which aborts when the lock is lost or expires, and the lock.
   * @param options - As for acquire().
   * @returns What `routine` returns.
   * @throws As acquire(); then what `routine` throws. A lost lock aborts `signal`;
   * the routine decides whether to stop.
   */
  using<T>(resources: Resources, ttlMs: number, routine: LockedRoutine<T>, options?: UsingOptions): Promise<T>;
  /**
   * Re-enters a lock that another process (or another handle) holds, by its
   * value: checks on a quorum that every key holds `value`, and resolves to a
   * handle whose release() leaves the keys to their holder. Rejects with
   * LockLostError when they no longer hold it.
   *
   * @param resources - The lock's resources, as it was acquired.
   * @param value - The lock's `value`.
   * @returns A handle on the same lock.
   * @throws {@link LockLostError} when a quorum no longer holds `value`;
   * {@link LockExpiredError} when what the quorum holds has no validity left;
   * {@link QuorumUnreachableError} when too few nodes answered;
   * {@link InvalidArgumentError} for a bad argument.
   */
  reenter(resources: Resources, value: string): Promise<Lock>;
  /**
   * Reads each node's state of `resources` without taking or changing
   * anything: the holder's value, its remaining TTL, the waiters in line,
   * and whether a quorum agrees on one holder. Every node request has the
   * locker's node timeout; each node's outcome is in the answer, which
   * never rejects for an outage.
   *
   * @param resources - A resource name, or several.
   * @param options - `signal`, which stops the wait for a node's first connection.
   * @returns Per resource a summary, per node its outcome.
   * @throws `options.signal`'s reason when it has aborted;
   * {@link InvalidArgumentError} for a bad argument.
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
