import type { Grant, ReleaseResult, WritesOut } from '../shared/grant.js';
import type { Lock } from './Lock.js';
import type { RenewalAnswer } from './RenewalBatch.js';

/** The node operations a Lock handle needs from the locker that made it. */
export interface LockOperations {
  /** The locker that made the lock: re-entry is per locker. */
  readonly owner: object;
  readonly clock: { now(): number };
  /**
   * When a lock whose extend to `ttlMs` started at `startedAt` is valid until
   * at the latest, if the extend took effect on some nodes only.
   */
  validUntilAfterExtend(ttlMs: number, startedAt: number): number;
  /** `remainingMs`: the validity the lock has left; the extend must win its quorum within it. */
  extend(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant>;
  /**
   * An extend like the above, sent with the other renewals asked for in the
   * same tick: one request per node for all of them (see RenewalBatch),
   * and answered through `answer`.
   */
  renew(keys: readonly string[], value: string, ttlMs: number, remainingMs: number, answer: RenewalAnswer): void;
  /** `contended`: see Grant.contended (absent: true, the safe side); `writesOut`: see Grant.writesOut. */
  release(keys: readonly string[], value: string, contended?: boolean, writesOut?: WritesOut): Promise<ReleaseResult>;
  /** The lock ended (released, lost or expired): the locker no longer counts it as held. */
  ended?(lock: Lock): void;
  /** Passes the lock to a waiter of this process instead (its result), or undefined: release it. */
  passOn(lock: Lock): ReleaseResult | undefined;
}
