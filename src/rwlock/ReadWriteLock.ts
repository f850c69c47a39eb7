import { UpgradeRefusedError } from '../shared/errors.js';
import { type CloseOptions, type CloseSummary, mergeSummaries } from '../lock/Closing.js';
import type { Lock } from '../lock/Lock.js';
import type { LockNode } from '../node/LockNode.js';
import type { ResolvedReadWriteOptions } from './options.js';
import { readRequests, writeRequests } from './readWriteRequests.js';
import { resourceOfKeys } from './readWriteKeys.js';
import { ReadWriteSide } from './ReadWriteSide.js';

/**
 * Any number of readers, or one writer, per resource, on the quorum engine:
 * `read` and `write` are its two lockers over the same nodes. Writers are not
 * starved: a waiting writer's claim holds new readers back (for a short lease
 * of its own, renewed while it waits).
 */
export abstract class ReadWriteLock {
  /** The readers' locker: acquire, tryAcquire and using take one resource name. */
  readonly read: ReadWriteSide;
  /** The writer's locker. Inside a reader's routine it refuses the same resource (UpgradeRefusedError). */
  readonly write: ReadWriteSide;
  #closed: Promise<CloseSummary> | undefined;

  protected constructor(nodes: readonly LockNode[], { settings, writerClaimMs }: ResolvedReadWriteOptions) {
    // Fencing tokens are the writer's: readers change nothing a token would guard.
    this.read = new ReadWriteSide(nodes, { ...settings, fencing: false }, readRequests, true);
    this.write = new ReadWriteSide(nodes, settings, writeRequests(writerClaimMs, settings.fencing));
    this.write.refuseHoldersOf(this.read);
  }

  /**
   * Turns a held write lock into a read lock with the same value, in one
   * step on each node (no other writer can come between), valid for `ttlMs`
   * (default: the write lock's TTL) from this call's start. The write lock's
   * handle ends (released). Rejects like an extend: LockLostError when a
   * quorum no longer holds the write lock.
   *
   * @param writeLock - A write lock of this read-write lock, held.
   * @param ttlMs - The read lock's TTL in milliseconds.
   * @returns The read lock, with the write lock's value.
   * @throws {@link LockLostError}, {@link LockExpiredError}, {@link QuorumUnreachableError}
   * or {@link ValidityExhaustedError}, as {@link Lock.extend}.
   */
  async downgrade(writeLock: Lock, ttlMs: number = writeLock.ttlMs): Promise<Lock> {
    const reader = await this.read.takeOverFrom(writeLock, ttlMs);
    // Its key is now the reader's lease: this release finds nothing of its own, ends the handle
    // and wakes the readers waiting (rwWriteRelease.lua), who may read beside it now.
    void writeLock.release();
    return reader;
  }

  /**
   * Closes both sides (see Locker.close): their acquires reject with
   * LockerClosedError, and every read and write lock they hold is released
   * on every node. One summary for both; a second call returns the same promise.
   */
  close(options?: CloseOptions): Promise<CloseSummary> {
    this.#closed ??= Promise.all([this.read.close(options), this.write.close(options)]).then(mergeSummaries);
    return this.#closed;
  }

  /** `await using rw = new RedlockReadWriteLock(…)` closes it when the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Always refused: two readers upgrading at once would wait for each other.
   * Release, then acquire the write lock.
   *
   * @param readLock - A read lock of this read-write lock.
   * @returns A promise that rejects with {@link UpgradeRefusedError}.
   */
  upgrade(readLock: Lock): Promise<never> {
    return Promise.reject(new UpgradeRefusedError(resourceOfKeys(readLock.resources)));
  }
}
