import type { NodeOutcome } from '../node/outcome.js';
import type { ReleaseOutcome } from '../node/LockNode.js';

/** What a successful acquire or extend gives the Lock handle. */
export interface Grant {
  /** Monotonic ms on the locker's clock until which the lock is valid. */
  readonly validUntil: number;
  readonly outcomes: readonly NodeOutcome[];
  /** With fencing: one token per resource. */
  readonly fencingTokens?: readonly bigint[];
}

/** Every node's answer to a release. */
export interface SettledRelease {
  /** Nodes on which our keys were still there and were deleted. */
  readonly released: number;
  /** Nodes asked. */
  readonly nodes: number;
  readonly outcomes: readonly ReleaseOutcome[];
}

/**
 * What release() reports, as soon as the outcome is decided: our keys are
 * gone from a quorum, or enough nodes answered otherwise (expired, foreign,
 * unreachable). `released` and `outcomes` cover the nodes that had answered
 * then; `settled` resolves once every node has. Never rejects.
 */
export interface ReleaseResult extends SettledRelease {
  readonly settled: Promise<SettledRelease>;
}

/** The node operations a Lock handle needs from the locker that made it. */
export interface LockOperations {
  readonly clock: { now(): number };
  /**
   * When a lock whose extend to `ttlMs` started at `startedAt` is valid until
   * at the latest, if the extend took effect on some nodes only.
   */
  validUntilAfterExtend(ttlMs: number, startedAt: number): number;
  /** `remainingMs`: the validity the lock has left; the extend must win its quorum within it. */
  extend(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant>;
  release(keys: readonly string[], value: string): Promise<ReleaseResult>;
}
