import type { NodeOutcome } from '../node/outcome.js';
import { countStatus } from '../node/outcome.js';

/**
 * Stable error codes. Branch on `error.code`, never on messages.
 */
export const ErrorCode = Object.freeze({
  INVALID_ARGUMENT: 'QUORUMLOCK_INVALID_ARGUMENT',
  LOCK_HELD: 'QUORUMLOCK_LOCK_HELD',
  QUORUM_UNREACHABLE: 'QUORUMLOCK_QUORUM_UNREACHABLE',
  VALIDITY_EXHAUSTED: 'QUORUMLOCK_VALIDITY_EXHAUSTED',
  LOCK_LOST: 'QUORUMLOCK_LOCK_LOST',
  LOCK_EXPIRED: 'QUORUMLOCK_LOCK_EXPIRED',
  LOCK_RELEASED: 'QUORUMLOCK_LOCK_RELEASED',
  ABORTED: 'QUORUMLOCK_ABORTED',
  NODE_TIMEOUT: 'QUORUMLOCK_NODE_TIMEOUT',
} as const);

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Base class of every error quorumlock throws or aborts a signal with. */
export class QuorumLockError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QuorumLockError';
    this.code = code;
  }
}

/** A bad argument or option; `argument` names it (`ttlMs`, `resources[1]`, `options.driftFactor`). */
export class InvalidArgumentError extends QuorumLockError {
  readonly argument: string;

  constructor(argument: string, problem: string) {
    super(ErrorCode.INVALID_ARGUMENT, `Invalid ${argument}: ${problem}`);
    this.name = 'InvalidArgumentError';
    this.argument = argument;
  }
}

/** Fields shared by errors that come from a vote among nodes. */
interface VoteDetails {
  readonly resources: readonly string[];
  /** Nodes configured (not only those that answered). */
  readonly nodeCount: number;
  readonly quorum: number;
  readonly outcomes: readonly NodeOutcome[];
}

function describeVote(details: VoteDetails): string {
  return `${countStatus(details.outcomes, 'ok')} of ${details.nodeCount} nodes agreed, quorum is ${details.quorum}`;
}

/** Another holder has the resource on enough nodes that a quorum is impossible. */
export class LockHeldError extends QuorumLockError {
  readonly resources: readonly string[];
  readonly quorum: number;
  readonly outcomes: readonly NodeOutcome[];
  /** Nodes on which another value holds the resource. */
  readonly heldOnNodes: number;

  constructor(details: VoteDetails) {
    const heldOnNodes = countStatus(details.outcomes, 'held');
    super(
      ErrorCode.LOCK_HELD,
      `${formatResources(details.resources)} is held elsewhere on ${heldOnNodes} node(s) (${describeVote(details)})`,
    );
    this.name = 'LockHeldError';
    this.resources = details.resources;
    this.quorum = details.quorum;
    this.outcomes = details.outcomes;
    this.heldOnNodes = heldOnNodes;
  }
}

/** Too many nodes failed or timed out for a quorum; `outcomes` has each node's cause. */
export class QuorumUnreachableError extends QuorumLockError {
  readonly resources: readonly string[];
  readonly quorum: number;
  readonly outcomes: readonly NodeOutcome[];

  constructor(details: VoteDetails) {
    const failed = details.outcomes.filter((o) => o.status === 'error' || o.status === 'timeout');
    const causes = failed.map((o) => `${o.node}: ${o.error?.message ?? o.status}`).join('; ');
    super(
      ErrorCode.QUORUM_UNREACHABLE,
      `Not enough nodes reachable for ${formatResources(details.resources)} (${describeVote(details)}): ${causes}`,
      { cause: failed[0]?.error },
    );
    this.name = 'QuorumUnreachableError';
    this.resources = details.resources;
    this.quorum = details.quorum;
    this.outcomes = details.outcomes;
  }
}

/** A quorum agreed, but the round trips took so long that no validity was left. */
export class ValidityExhaustedError extends QuorumLockError {
  readonly resources: readonly string[];
  readonly validityMs: number;
  readonly outcomes: readonly NodeOutcome[];

  constructor(resources: readonly string[], validityMs: number, outcomes: readonly NodeOutcome[]) {
    super(
      ErrorCode.VALIDITY_EXHAUSTED,
      `${formatResources(resources)}: a quorum agreed but the validity was used up (${validityMs.toFixed(1)} ms left)`,
    );
    this.name = 'ValidityExhaustedError';
    this.resources = resources;
    this.validityMs = validityMs;
    this.outcomes = outcomes;
  }
}

/** The lock is no longer ours: a quorum of nodes no longer holds its value. */
export class LockLostError extends QuorumLockError {
  readonly resources: readonly string[];
  readonly outcomes: readonly NodeOutcome[];

  constructor(resources: readonly string[], outcomes: readonly NodeOutcome[], cause?: unknown) {
    super(ErrorCode.LOCK_LOST, `Lock on ${formatResources(resources)} was lost`, { cause });
    this.name = 'LockLostError';
    this.resources = resources;
    this.outcomes = outcomes;
  }
}

/** The lock's validity ran out on the library's clock before it was extended. */
export class LockExpiredError extends QuorumLockError {
  readonly resources: readonly string[];

  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_EXPIRED, `Lock on ${formatResources(resources)} has expired`);
    this.name = 'LockExpiredError';
    this.resources = resources;
  }
}

/** The reason a lock's signal aborts once the lock was released. */
export class LockReleasedError extends QuorumLockError {
  readonly resources: readonly string[];

  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_RELEASED, `Lock on ${formatResources(resources)} was released`);
    this.name = 'LockReleasedError';
    this.resources = resources;
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class AbortedError extends QuorumLockError {
  constructor(reason: unknown) {
    super(ErrorCode.ABORTED, 'The operation was aborted', { cause: reason });
    this.name = 'AbortedError';
  }
}

/** One node gave no reply within the node timeout. */
export class NodeTimeoutError extends QuorumLockError {
  readonly node: string;
  readonly timeoutMs: number;

  constructor(node: string, timeoutMs: number) {
    super(ErrorCode.NODE_TIMEOUT, `${node} did not reply within ${timeoutMs} ms`);
    this.name = 'NodeTimeoutError';
    this.node = node;
    this.timeoutMs = timeoutMs;
  }
}

export function isQuorumLockError(error: unknown): error is QuorumLockError {
  return error instanceof QuorumLockError;
}

function formatResources(resources: readonly string[]): string {
  return resources.length === 1 ? `"${resources[0]}"` : `[${resources.map((r) => `"${r}"`).join(', ')}]`;
}
