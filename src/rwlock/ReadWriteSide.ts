import { InvalidArgumentError, UpgradeRefusedError } from '../shared/errors.js';
import type { Lock } from '../lock/Lock.js';
import type { LockedRoutine } from '../lock/Locker.js';
import type { AcquireOptions, ResolvedOptions, TryAcquireOptions, UsingOptions } from '../lock/options.js';
import { heldLockFor } from '../lock/reentry/HoldContext.js';
import { holdWhile } from '../lock/reentry/holdWhile.js';
import { assertFunction } from '../lock/validate.js';
import type { LockNode } from '../node/LockNode.js';
import { type PrimitiveRequests, QuorumCoordinator } from '../redlock/QuorumCoordinator.js';
import { readWriteKeys } from './readWriteKeys.js';

/**
 * One side of a read-write lock (its readers, or its writer) on the quorum
 * engine: the same calls and Lock handle as a mutex locker, for one resource
 * at a time. Both sides share the nodes; `refuseWithin` is the side whose
 * holding routine may not call this side (a reader asking to write).
 */
export class ReadWriteSide extends QuorumCoordinator {
  #refuseWithin: ReadWriteSide | undefined;
  readonly #readers: boolean;

  /** @internal A read-write lock makes its two sides; users get them as `read` and `write`. */
  constructor(nodes: readonly LockNode[], settings: ResolvedOptions, requests: PrimitiveRequests, readers = false) {
    super(nodes, settings, requests);
    this.#readers = readers;
  }

  /**
   * A writer's release hands every waiting reader a reservation
   * (rwWriteRelease.lua): a quorum of them is a reader's lock, as a
   * mutex's handoff (handoffGrant.ts), unless replicas must confirm its
   * writes first. Nobody hands a writer its key.
   */
  protected override takesHandoffs(): boolean {
    return this.#readers && this.settings.syncReplicas === undefined;
  }

  /** @internal The side whose holders this side refuses (UpgradeRefusedError). Set once, by the read-write lock. */
  refuseHoldersOf(side: ReadWriteSide): void {
    this.#refuseWithin = side;
  }

  /**
   * Waits per the retry policy until this side's lock of `resource` is ours:
   * a read lock beside other readers, or the write lock alone.
   *
   * @param resource - The resource's name: one non-empty string.
   * @param ttlMs - How long the lock is held unless extended, in milliseconds (a positive integer).
   * @param options - `signal`, `acquireTimeoutMs`, `retry` for this call.
   * @returns The held {@link Lock}.
   * @throws {@link LockHeldError} when the other side (or another writer) held it
   * until the acquire timeout; {@link UpgradeRefusedError} when a reader's
   * routine asks for the write lock of what it reads;
   * {@link QuorumUnreachableError}, {@link ValidityExhaustedError} as the mutex's acquire;
   * {@link AbortedError} when `options.signal` aborts; {@link InvalidArgumentError} for a bad argument.
   */
  override async acquire(resource: string, ttlMs: number, options?: AcquireOptions): Promise<Lock> {
    return super.acquire(this.#keys(resource), ttlMs, options);
  }

  /**
   * One attempt at this side's lock of `resource`.
   *
   * @param resource - The resource's name: one non-empty string.
   * @param ttlMs - How long the lock is held unless extended, in milliseconds.
   * @param options - `signal`.
   * @returns The held {@link Lock}, or null when the resource is held against this side.
   * @throws As acquire(), except that a held resource resolves to null.
   */
  override async tryAcquire(resource: string, ttlMs: number, options?: TryAcquireOptions): Promise<Lock | null> {
    return super.tryAcquire(this.#keys(resource), ttlMs, options);
  }

  /**
   * Acquires, runs `routine` while extending the lock in the background (its
   * nested calls of this side re-enter it), then releases. Resolves or
   * rejects as the routine does.
   *
   * @param resource - The resource's name: one non-empty string.
   * @param ttlMs - The lock's TTL in milliseconds; the auto-extension renews it.
   * @param routine - Called with the lock's `signal` (aborts when the lock is lost) and the lock.
   * @param options - As for acquire().
   * @throws As acquire(); then what `routine` throws.
   */
  override async using<T>(resource: string, ttlMs: number, routine: LockedRoutine<T>, options?: UsingOptions): Promise<T> {
    assertFunction(routine, 'routine');
    return holdWhile(await this.acquire(resource, ttlMs, options), routine, this.settings);
  }

  /**
   * Not offered: a read-write lock cannot be re-entered by its value.
   *
   * @returns A promise that rejects with {@link InvalidArgumentError}.
   */
  override reenter(): Promise<Lock> {
    return Promise.reject(new InvalidArgumentError('resources', 'a read-write lock cannot be re-entered by its value'));
  }

  /** @internal A handle of this side for `keys`, which the nodes already hold with `value` (see ReadWriteLock.downgrade). */
  takeOverFrom(lock: Lock, ttlMs: number): Promise<Lock> {
    return this.takeOver(lock.resources, lock.value, ttlMs, lock.remainingMs());
  }

  #keys(resource: string): string[] {
    if (typeof resource !== 'string' || resource === '') {
      throw new InvalidArgumentError('resource', 'expected a non-empty string: a read-write lock guards one resource');
    }
    const keys = readWriteKeys(resource);
    if (this.#refuseWithin && heldLockFor(this.#refuseWithin, keys)) throw new UpgradeRefusedError(resource);
    return keys;
  }
}
