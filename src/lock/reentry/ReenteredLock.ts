import type { LockExpiredError, LockLostError } from '../../shared/errors.js';
import { whenAborted } from '../../shared/abortListeners.js';
import { LockReleasedError } from '../../shared/errors.js';
import type { ReleaseResult } from '../../shared/grant.js';
import type { LockOperations } from '../LockOperations.js';
import { Lock } from '../Lock.js';
import type { LockedRoutine } from '../Locker.js';
import { assertTtl } from '../validate.js';
import { runHolding } from './HoldContext.js';
import { NOTHING_RELEASED } from './nothingReleased.js';

/**
 * One more hold on a lock that the caller's routine already holds: what a
 * re-entering acquire(), tryAcquire() or using() hands out. It shares the
 * lock's keys, value, validity and fencing tokens, and ends with it; its
 * release() gives back this hold only and asks no node.
 */
export class ReenteredLock extends Lock {
  /** @internal The lock as acquired, whose keys this hold shares. */
  readonly enclosing: Lock;
  readonly #owner: object;
  #released = false;
  #controller: AbortController | undefined;
  /** Stops following the enclosing lock's signal (one listener on it for all its re-entries: abortListeners.ts). */
  #forgetEnclosing: (() => void) | undefined;
  readonly #followEnclosing = (): void => {
    this.#controller?.abort(this.enclosing.signal.reason);
  };

  /** @internal */
  constructor(ops: LockOperations, enclosing: Lock) {
    const grant = { validUntil: enclosing.validUntil, ttlMs: enclosing.ttlMs, outcomes: [], fencingTokens: enclosing.fencingTokens };
    super(ops, enclosing.resources, enclosing.value, grant);
    this.enclosing = enclosing;
    this.#owner = ops.owner;
    enclosing.countHold(1);
  }

  override get validUntil(): number {
    return this.enclosing.validUntil;
  }

  override get ttlMs(): number {
    return this.enclosing.ttlMs;
  }

  override get holds(): number {
    return this.enclosing.holds;
  }

  override remainingMs(): number {
    return this.enclosing.remainingMs();
  }

  /** Aborts as the enclosing lock's signal does, or with LockReleasedError once this hold is given back. */
  override get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      const enclosing = this.enclosing.signal;
      if (this.#released) controller.abort(new LockReleasedError(this.resources));
      else if (enclosing.aborted) controller.abort(enclosing.reason);
      else this.#forgetEnclosing = whenAborted(enclosing, this.#followEnclosing);
    }
    return this.#controller.signal;
  }

  override get ended(): boolean {
    return this.#released || this.enclosing.ended;
  }

  /** Extends the shared lock on the nodes, as the enclosing lock's extend() does. */
  override async extend(ttlMs: number): Promise<this> {
    assertTtl(ttlMs);
    if (this.#released) throw new LockReleasedError(this.resources);
    await this.enclosing.extend(ttlMs);
    return this;
  }

  /** Gives back this hold; the keys stay until the enclosing lock is released. Idempotent. */
  override release(): Promise<ReleaseResult> {
    if (!this.#released) {
      this.#released = true;
      this.enclosing.countHold(-1);
      if (this.#controller) {
        this.#forgetEnclosing?.();
        this.#controller.abort(new LockReleasedError(this.resources));
      }
    }
    return NOTHING_RELEASED;
  }

  override async scope<T>(routine: LockedRoutine<T>): Promise<T> {
    return await runHolding(this.#owner, this.enclosing, () => routine(this.signal, this));
  }

  /** @internal */
  override markLost(error: LockLostError | LockExpiredError): void {
    this.enclosing.markLost(error);
  }
}
