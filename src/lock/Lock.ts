import { type LostEvent, publish } from '../diagnostics/channels.js';
import { LockerClosedError, LockExpiredError, LockLostError, LockReleasedError, type QuorumLockError } from '../shared/errors.js';
import type { Claim } from '../shared/claim.js';
import type { Grant, ReleaseResult, WritesOut } from '../shared/grant.js';
import type { RenewalAnswer } from './RenewalBatch.js';
import type { LockOperations } from './LockOperations.js';
import type { LockedRoutine } from './Locker.js';
import { realSetImmediate } from '../shared/realSetImmediate.js';
import { releaseAtEnd } from './releaseAtEnd.js';
import { runHolding } from './reentry/HoldContext.js';
import { sharedTimerFor, TimedTask } from './SharedTimer.js';
import { assertTtl } from './validate.js';

/** What renewThen() calls once the renewal is decided. */
export interface RenewalDone {
  renewed(): void;
  failed(error: unknown): void;
}

/**
 * A release that passed the lock to a waiter of this process resolves once
 * that waiter has resumed: it holds the lock now, and the releaser's own
 * continuation (often its next acquire) has nothing to wait for. Resolved at
 * once, the two ran interleaved, hop for hop, in the same run of microtasks,
 * and the releaser's steps made the gap between the two holders half as long
 * again: 8 processes of 8 waiters on one key, traced, passed in 82-92 µs
 * (median, three runs) so, 56-66 µs with the releaser after.
 */
function afterTheTaker(passed: ReleaseResult): Promise<ReleaseResult> {
  return new Promise((resolve) => realSetImmediate(resolve, passed));
}

/** Marks a lock released before anyone asked for the reason. */
const RELEASED = Symbol('released');

/**
 * A held lock, as acquire(), tryAcquire(), using() and reenter() give it. Its
 * validity is counted on the locker's monotonic clock; `signal` aborts when
 * the lock is lost, expires or is released. Release it with release(), or
 * with `await using`.
 */
export class Lock {
  /**
   * The keys held: the resources as the acquire named them (a string becomes
   * one entry); for a semaphore's permit, the permit slot's keys.
   */
  readonly resources: readonly string[];
  /** The random value (128 bits, hex) that marks our keys on every node. */
  readonly value: string;
  /** With `fencing: true`, one token per resource, in the order of `resources`. */
  readonly fencingTokens: readonly bigint[] | undefined;
  #validUntil: number;
  #ttlMs: number;
  /** 1 for the acquire, plus the re-entries not yet released. */
  #holds = 1;
  readonly #ops: LockOperations;
  #controller: AbortController | undefined;
  /** On the process's shared timer, once the signal was read. */
  #expiry: TimedTask | undefined;
  #renewalAnswer: { readonly done: RenewalDone; readonly answer: RenewalAnswer } | undefined;
  #ended: QuorumLockError | typeof RELEASED | undefined;
  #release: Promise<ReleaseResult> | undefined;
  readonly #contended: boolean;
  /** A handed-off lock's claim of its full TTL while it is out (see Grant.claim). */
  #claim: Claim | undefined;
  /**
   * A write of this lock was given up on (a timeout) or fell short (a
   * replica sync): it may still land, or keep the keys past our validity.
   */
  #mayOutliveValidity = false;
  /**
   * While an auto-extension renews the lock, its renewals see the end come
   * (a renewal's deadline ends with the validity, and one due past the end
   * ends the lock: autoExtend.ts), so no expiry task waits on the shared
   * timer beside each renewal: with ten thousand locks held, the expiries
   * were half the timer's heap and half its turns.
   */
  #renewalsWatchEnd = false;
  /** The acquire's writes some node had not answered when it was granted (Grant.writesOut), until none is out. */
  #writesOut: WritesOut | undefined;

  /** @internal Where the locker's list of held locks keeps this one (HeldLocks), -1 when not there. */
  heldSlot = -1;

  /** @internal Lockers create locks; users get them from acquire(). */
  constructor(ops: LockOperations, resources: readonly string[], value: string, grant: Grant) {
    this.#ops = ops;
    this.resources = resources;
    this.value = value;
    this.#validUntil = grant.validUntil;
    this.#contended = grant.contended === true;
    this.#ttlMs = grant.ttlMs;
    this.fencingTokens = grant.fencingTokens;
    this.#writesOut = grant.writesOut;
    if (grant.claim) this.#followClaim(grant.claim);
    // A node that timed out may still take the keys later: the end is watched, to release them then.
    if (grant.outcomes.some((outcome) => outcome.status === 'timeout')) {
      this.#mayOutliveValidity = true;
      this.#scheduleExpiry();
    }
  }

  /** @internal The acquire's writes some node had not answered when it was granted (see Grant.writesOut). */
  get writesOut(): WritesOut | undefined {
    return this.#writesOut;
  }

  /** @internal The claim of the full TTL, while it is out (see Grant.claim). */
  get pendingClaim(): Claim | undefined {
    return this.#claim;
  }

  /**
   * With `fencing: true`: the token of the first resource, strictly larger
   * than any earlier holder's. Pass it to the resource you protect and have it
   * refuse writes with a smaller token than it has seen.
   */
  get fencingToken(): bigint | undefined {
    return this.fencingTokens?.[0];
  }

  /** Monotonic milliseconds (on the locker's clock, not a wall-clock time) until which the lock is valid. */
  get validUntil(): number {
    return this.#validUntil;
  }

  /**
   * The TTL the keys were last given: by the acquire, or the last extend
   * (which is also what using() extends by). For a lock re-entered by its
   * value, the smallest remaining TTL the quorum reported.
   */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * Holds open on this lock: 1 for the acquire, plus one per re-entry whose
   * handle is not released yet; 0 once the lock itself is released.
   */
  get holds(): number {
    return this.#release ? 0 : this.#holds;
  }

  /** @internal A re-entry took (+1) or gave back (-1) a hold. */
  countHold(change: 1 | -1): void {
    this.#holds += change;
  }

  /**
   * Runs `routine` so that calls of this lock's locker inside it (and in what
   * it awaits) re-enter this lock instead of waiting for it, as inside
   * using(). Neither extends nor releases the lock: that stays the caller's.
   *
   * @param routine - Called with this lock's `signal` and the lock.
   * @returns What `routine` returns; rejects as it rejects.
   */
  async scope<T>(routine: LockedRoutine<T>): Promise<T> {
    return await runHolding(this.#ops.owner, this, () => routine(this.signal, this));
  }

  /** Milliseconds of validity left, never negative. */
  remainingMs(): number {
    return Math.max(0, this.#validUntil - this.#ops.clock.now());
  }

  /**
   * Aborts when the lock ends, with the reason as `signal.reason`:
   * {@link LockLostError}, {@link LockExpiredError} or {@link LockReleasedError}, or
   * {@link LockerClosedError} when the locker's `close()` released it.
   * Pass it to the work the lock guards, so that the work stops with the lock.
   */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(this.#endReason());
      else this.#scheduleExpiry();
    }
    return this.#controller.signal;
  }

  /** Whether the lock was released, lost or seen expired. */
  get ended(): boolean {
    return this.#ended !== undefined || this.remainingMs() <= 0;
  }

  /**
   * Resets the TTL on a quorum of nodes; validity is counted again from this
   * call's start. Fails without a round trip once the lock has expired here.
   *
   * @param ttlMs - The new TTL in milliseconds (a positive integer), counted from now.
   * @returns This lock, with its new `validUntil`.
   * @throws {@link LockLostError} when a quorum no longer holds the lock (the lock ends);
   * {@link LockExpiredError} when its validity ran out before the call;
   * {@link LockReleasedError} after release();
   * {@link QuorumUnreachableError} or {@link ValidityExhaustedError} when the
   * extend did not get a quorum in time (the lock is not ended: it stays
   * valid until `validUntil`, and may be extended again);
   * {@link InvalidArgumentError} for a bad `ttlMs`.
   */
  async extend(ttlMs: number): Promise<this> {
    const startedAt = this.#beforeExtend(ttlMs);
    const remainingMs = this.#validUntil - startedAt;
    this.#countShorterTtl(ttlMs, startedAt);
    let grant: Grant;
    try {
      grant = await this.#ops.extend(this.resources, this.value, ttlMs, remainingMs);
    } catch (error) {
      this.#extendFailed(error);
      throw error;
    }
    return this.#extended(grant);
  }

  /**
   * @internal An extend by the auto-extender: the same, sent together with
   * the other locks' renewals that fall due now (LockOperations.renew).
   */
  renew(ttlMs: number): Promise<this> {
    return new Promise((resolve, reject) => this.renewThen(ttlMs, { renewed: () => resolve(this), failed: reject }));
  }

  /**
   * @internal renew(), answered through `done` instead of a promise (see
   * RenewalAnswer): called back once, never throws.
   */
  renewThen(ttlMs: number, done: RenewalDone): void {
    let startedAt: number;
    try {
      startedAt = this.#beforeExtend(ttlMs);
    } catch (error) {
      done.failed(error);
      return;
    }
    const remainingMs = this.#validUntil - startedAt;
    this.#countShorterTtl(ttlMs, startedAt);
    this.#ops.renew(this.resources, this.value, ttlMs, remainingMs, this.#renewalAnswerFor(done));
  }

  /** The answer of a renewal for `done`: made once per `done` (the auto-extender gives the same one every time), not once per renewal. */
  #renewalAnswerFor(done: RenewalDone): RenewalAnswer {
    if (this.#renewalAnswer?.done === done) return this.#renewalAnswer.answer;
    const answer: RenewalAnswer = {
      resolve: (grant) => {
        try {
          this.#extended(grant);
        } catch (error) {
          done.failed(error);
          return;
        }
        done.renewed();
      },
      reject: (error) => {
        this.#extendFailed(error);
        done.failed(error);
      },
    };
    this.#renewalAnswer = { done, answer };
    return answer;
  }

  /**
   * Throws when the lock cannot be extended any more; else when the extend
   * starts (the validity left is counted from then: one clock read).
   */
  #beforeExtend(ttlMs: number): number {
    assertTtl(ttlMs);
    if (this.#ended) throw this.#endReason();
    const startedAt = this.#ops.clock.now();
    if (this.#validUntil - startedAt <= 0) {
      this.#end(new LockExpiredError(this.resources));
      throw this.#endReason();
    }
    // The extend goes out after the claim, on the same connections: its answer is the one that counts.
    this.#claim?.send();
    this.#claim = undefined;
    return startedAt;
  }

  /**
   * A TTL shorter than what is left shortens our keys from the moment a
   * node applies it, before any reply says so: the validity counts it as the
   * extend is sent.
   */
  #countShorterTtl(ttlMs: number, startedAt: number): void {
    const afterThis = this.#ops.validUntilAfterExtend(ttlMs, startedAt);
    if (afterThis < this.#validUntil) {
      this.#validUntil = afterThis;
      if (this.#controller) this.#scheduleExpiry();
    }
  }

  #extended(grant: Grant): this {
    if (this.#ended) throw this.#endReason();
    this.#validUntil = grant.validUntil;
    this.#ttlMs = grant.ttlMs;
    if (this.#writesOut && !this.#writesOut.stillOut().includes(true)) this.#writesOut = undefined;
    if (this.#controller) this.#scheduleExpiry();
    return this;
  }

  #extendFailed(error: unknown): void {
    if (mayHaveLanded(error)) this.#mayOutliveValidity = true;
    if (error instanceof LockLostError) {
      this.#end(error);
      return;
    }
    // The extend may still land (a timeout) or have landed (a short sync),
    // a shorter TTL with it (counted in before sending): the end is
    // watched even if nobody reads the signal, to release then.
    if (this.#controller || this.#mayOutliveValidity) this.#scheduleExpiry();
  }

  /**
   * Deletes our keys on every node. Idempotent: later calls return the first
   * call's result. Releasing an expired lock reports 0 nodes, not an error.
   *
   * @returns How many nodes released, as soon as that is decided; never rejects
   * (node failures are in its `outcomes`, and their keys expire by their TTL).
   */
  release(): Promise<ReleaseResult> {
    if (!this.#release) {
      // An unsent claim goes first: sent after the release, it would take the keys back.
      this.#claim?.send();
      const passed = this.remainingMs() > 0 ? this.#ops.passOn(this) : undefined;
      this.#release = passed ? afterTheTaker(passed) : this.#ops.release(this.resources, this.value, this.#contended, this.#writesOut);
      // An Error costs a stack trace: the reason is built only when asked for.
      this.#end(RELEASED);
    }
    return this.#release;
  }

  /**
   * @internal The release by the locker's close(): on every node, never
   * passed to a waiter of this process (they are being turned away); the
   * signal aborts with `reason`. A lock already released keeps that release.
   */
  releaseForClose(reason: LockerClosedError): Promise<ReleaseResult> {
    if (!this.#release) {
      this.#claim?.send();
      this.#release = this.#ops.release(this.resources, this.value, this.#contended, this.#writesOut);
      this.#end(reason);
    }
    return this.#release;
  }

  /**
   * `await using lock = await locker.acquire(…)` releases the lock when the
   * block ends. It never rejects: an error thrown here would be wrapped with
   * the block's own in a SuppressedError, hiding it from a plain `catch`. A
   * failed release leaves the keys to their TTL and is published on
   * `quorumlock:release`, as after using().
   */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch {
      // See above: the block's own outcome is what the caller must see.
    }
  }

  /**
   * @internal A write of this lock's value by an earlier attempt of its
   * acquire was given up on: the lock ends with a release, as after a
   * timed-out write of its own (see #end).
   */
  mayOutliveValidity(): void {
    if (this.#mayOutliveValidity || this.#ended) return;
    this.#mayOutliveValidity = true;
    this.#scheduleExpiry();
  }

  /**
   * @internal The auto-extender watches the lock's end through its renewals
   * (`true`), or stops (`false`): the lock's own expiry task is then put
   * back for its signal (see #renewalsWatchEnd).
   */
  watchEndThroughRenewals(watching: boolean): void {
    this.#renewalsWatchEnd = watching;
    if (watching) {
      if (this.#expiry?.scheduled && !this.#mayOutliveValidity) sharedTimerFor(this.#ops.clock).cancel(this.#expiry);
    } else if (this.#controller && !this.#ended) {
      this.#scheduleExpiry();
    }
  }

  /** @internal Marks the lock lost (by the auto-extender or a failed extend). */
  markLost(error: LockLostError | LockExpiredError): void {
    this.#end(error);
  }

  /** A claim that wins counts from its own start, as an extend does; one that fails leaves the reservation's validity. */
  #followClaim(claim: Claim): void {
    this.#claim = claim;
    void claim.result.then((grant) => {
      if (this.#claim !== claim) return;
      this.#claim = undefined;
      if (!grant || this.#ended) return;
      this.#validUntil = grant.validUntil;
      this.#ttlMs = grant.ttlMs;
      if (this.#controller) this.#scheduleExpiry();
    });
  }

  /**
   * A lock that ends unreleased (lost or expired) after a write of it was
   * given up on or fell short is released all the same: that write may
   * still run, late, even on a promoted replica after a failover, and keep
   * the keys alive past the validity the holder was told; the release
   * follows it (see LateWrites).
   */
  #end(reason: QuorumLockError | typeof RELEASED): void {
    if (!this.#ended) {
      this.#ended = reason;
      if (this.#expiry) sharedTimerFor(this.#ops.clock).cancel(this.#expiry);
      if (reason !== RELEASED && !this.#release && this.#mayOutliveValidity) {
        this.#claim?.send();
        this.#release = releaseAtEnd(this.#ops, this.resources, this.value, this.#contended, this.#writesOut);
      }
      this.#ops.ended?.(this);
      if (reason !== RELEASED && !(reason instanceof LockReleasedError) && !(reason instanceof LockerClosedError)) {
        publish<LostEvent>('lost', () => ({ resources: this.resources, errorCode: reason.code }));
      }
      if (this.#controller) this.#controller.abort(this.#endReason());
    }
  }

  #endReason(): QuorumLockError {
    if (this.#ended === RELEASED) this.#ended = new LockReleasedError(this.resources);
    return this.#ended as QuorumLockError;
  }

  #scheduleExpiry(): void {
    // An expiry due before the new end stays where it is: when it runs, it
    // finds the validity left and moves itself on (or ends the lock, if that
    // end has passed by then). Moved at every renewal, it was a sift through
    // the heap of ten thousand tasks while the batch's replies were counted,
    // lock after lock, in one turn; left, it comes off the heap's top in a
    // timer turn of its own (bounded by TASKS_PER_TURN).
    if (this.#expiry?.scheduled && this.#expiry.dueAt <= this.#validUntil) return;
    if (this.remainingMs() <= 0) {
      this.#end(new LockExpiredError(this.resources));
      return;
    }
    // A lock that may outlive its validity is released at its end: that needs the task.
    if (this.#renewalsWatchEnd && !this.#mayOutliveValidity) return;
    this.#expiry ??= new TimedTask(() => {
      if (this.remainingMs() <= 0) this.#end(new LockExpiredError(this.resources));
      else this.#scheduleExpiry();
    });
    sharedTimerFor(this.#ops.clock).schedule(this.#expiry, this.#validUntil);
  }
}

/** Whether a failed extend may have written on some node, or still may: a timeout, an error (a short sync wrote), or no outcomes to tell. */
function mayHaveLanded(error: unknown): boolean {
  const outcomes = (error as { outcomes?: readonly { status: string }[] }).outcomes;
  return outcomes === undefined || outcomes.some((outcome) => outcome.status === 'timeout' || outcome.status === 'error');
}
