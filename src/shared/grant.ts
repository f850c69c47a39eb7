import type { Claim } from './claim.js';
import type { NodeOutcome } from './outcome.js';

/** What a successful acquire or extend gives the Lock handle. */
export interface Grant {
  /** The keys taken, when a primitive takes others than the resources asked for (a semaphore's permit slots). */
  readonly keys?: readonly string[];
  /** Monotonic ms on the locker's clock until which the lock is valid. */
  readonly validUntil: number;
  /** The TTL the keys were given; for a lock re-entered by its value, the smallest PTTL of the quorum. */
  readonly ttlMs: number;
  readonly outcomes: readonly NodeOutcome[];
  /** With fencing: one token per resource. */
  readonly fencingTokens?: readonly bigint[];
  /**
   * Taken from a wait line or passed on by a holder: others waited, so its
   * release looks for the line to hand the keys over. Absent on an
   * uncontended acquire, whose release costs what it cost before the lines.
   */
  readonly contended?: boolean;
  /**
   * A lock the nodes handed to a waiter at a release holds the keys for a
   * short reservation only (validUntil counts that); its claim of the full
   * TTL follows it (see claim.ts) and resolves to the grant it won, or
   * undefined if it won none (the lock then keeps the reservation's validity).
   */
  readonly claim?: Claim | undefined;
  /**
   * Some node had not answered the acquire when its vote was decided: its
   * write may run after the lock's release (see QuorumCoordinator's
   * releaseAfterWritesOut). Absent when every node had answered.
   */
  readonly writesOut?: WritesOut | undefined;
}

/** The writes of a granted acquire that were still out when its vote was decided. */
export interface WritesOut {
  /** Per node, now: its write has not answered yet. */
  stillOut(): readonly boolean[];
  /** Every node's outcome, once the last one has answered or timed out. */
  readonly settled: Promise<readonly NodeOutcome[]>;
}

/**
 * One node's answer to a release. `status` is `ok` where our keys were
 * deleted, `held` where none still held our value (expired, or another
 * holder's), or `error`/`timeout` (the keys there expire by their TTL).
 */
export interface ReleaseNodeOutcome extends NodeOutcome {
  /**
   * This node's share of the result's `released`: 1 where our keys were
   * deleted (some or all of them), else 0. `released` counts nodes at every
   * level, never keys.
   */
  readonly released: 0 | 1;
}

/**
 * Every node's answer to a release. Its own properties are exactly these
 * (JSON.stringify shows them all).
 */
export interface SettledRelease {
  /** Nodes on which our keys were deleted: the `ok` outcomes. */
  readonly released: number;
  /** Nodes asked. */
  readonly nodes: number;
  /** Each node's answer, in the order they came. */
  readonly outcomes: readonly ReleaseNodeOutcome[];
}

/**
 * What release() reports, as soon as the outcome is decided: our keys are
 * gone from a quorum, or enough nodes answered otherwise (expired, foreign,
 * unreachable). `released` and `outcomes` cover the nodes that had answered
 * then; `settled` resolves once every node has. Never rejects. Own
 * properties: `released`, `nodes`, `outcomes`; `settled` is an accessor
 * (built when first read; a promise has no JSON form).
 */
export interface ReleaseResult extends SettledRelease {
  /** Resolves once every node has answered or timed out; never rejects. */
  readonly settled: Promise<SettledRelease>;
  /**
   * Present (true) when the lock went straight to the next waiter of this
   * process for the same resources: its keys stay on the nodes, now that
   * waiter's, so none was deleted (`released: 0`) and no node was asked.
   */
  readonly passedOn?: true;
}
