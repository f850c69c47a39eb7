import type { NodeOutcome } from './outcome.js';
import { countStatus } from './outcome.js';

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
  OVERLAPPING_HOLD: 'QUORUMLOCK_OVERLAPPING_HOLD',
  NODE_TIMEOUT: 'QUORUMLOCK_NODE_TIMEOUT',
  NODE_CONNECTION: 'QUORUMLOCK_NODE_CONNECTION',
  REPLICA_SYNC: 'QUORUMLOCK_REPLICA_SYNC',
  LIMIT_MISMATCH: 'QUORUMLOCK_LIMIT_MISMATCH',
  UPGRADE_REFUSED: 'QUORUMLOCK_UPGRADE_REFUSED',
  LOCKER_CLOSED: 'QUORUMLOCK_LOCKER_CLOSED',
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
  declare readonly code: typeof ErrorCode.INVALID_ARGUMENT;
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
  declare readonly code: typeof ErrorCode.LOCK_HELD;
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
  declare readonly code: typeof ErrorCode.QUORUM_UNREACHABLE;
  readonly resources: readonly string[];
  readonly quorum: number;
  readonly outcomes: readonly NodeOutcome[];

  constructor(details: VoteDetails) {
    const failed = details.outcomes.filter((o) => o.status === 'error' || o.status === 'timeout');
    const causes = failed.map(describeFailure).join('; ');
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
  declare readonly code: typeof ErrorCode.VALIDITY_EXHAUSTED;
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
  declare readonly code: typeof ErrorCode.LOCK_LOST;
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
  declare readonly code: typeof ErrorCode.LOCK_EXPIRED;
  readonly resources: readonly string[];

  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_EXPIRED, `Lock on ${formatResources(resources)} has expired`);
    this.name = 'LockExpiredError';
    this.resources = resources;
  }
}

/** The reason a lock's signal aborts once the lock was released. */
export class LockReleasedError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.LOCK_RELEASED;
  readonly resources: readonly string[];

  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_RELEASED, `Lock on ${formatResources(resources)} was released`);
    this.name = 'LockReleasedError';
    this.resources = resources;
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class AbortedError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.ABORTED;
  constructor(reason: unknown) {
    super(ErrorCode.ABORTED, 'The operation was aborted', { cause: reason });
    this.name = 'AbortedError';
  }
}

/**
 * A call inside a routine that holds a lock asked, through the same locker,
 * for resources that overlap the held ones without being among them. Taking
 * them would either wait for this routine's own lock until the acquire
 * timeout, or take a second lock out of order; lock the union in the outer
 * call instead. `heldResources` are the enclosing lock's.
 */
export class OverlappingHoldError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.OVERLAPPING_HOLD;
  readonly resources: readonly string[];
  readonly heldResources: readonly string[];

  constructor(resources: readonly string[], heldResources: readonly string[]) {
    super(
      ErrorCode.OVERLAPPING_HOLD,
      `${formatResources(resources)} overlaps ${formatResources(heldResources)}, which this routine already holds through the same locker; ` +
        'a nested call may lock the held resources or some of them, or resources apart from them: lock the union in the outer call',
    );
    this.name = 'OverlappingHoldError';
    this.resources = resources;
    this.heldResources = heldResources;
  }
}

/** One node gave no reply within the node timeout. */
export class NodeTimeoutError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.NODE_TIMEOUT;
  readonly node: string;
  readonly timeoutMs: number;

  constructor(node: string, timeoutMs: number) {
    super(ErrorCode.NODE_TIMEOUT, `${node} did not reply within ${timeoutMs} ms`);
    this.name = 'NodeTimeoutError';
    this.node = node;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * One node's client could not make its first connection: refused, host not
 * found, authentication failed, or ioredis's own connect timeout. `cause` is
 * the client's error. Not a timeout: a node still connecting is waited for.
 */
export class NodeConnectionError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.NODE_CONNECTION;
  readonly node: string;

  constructor(node: string, cause: Error) {
    super(ErrorCode.NODE_CONNECTION, `${node} cannot be reached: ${connectionProblem(cause)}`, { cause });
    this.name = 'NodeConnectionError';
    this.node = node;
  }
}

/**
 * One node took the lock, but fewer of its replicas than `syncReplicas`
 * asks for confirmed the write (Redis WAIT) within its timeout, so that
 * node's grant did not count as a vote: a failover to a replica that lacks
 * the key would hand the lock to someone else.
 */
export class ReplicaSyncError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.REPLICA_SYNC;
  readonly node: string;
  /** Replicas that acknowledged the write. */
  readonly acknowledged: number;
  /** Replicas that had to. */
  readonly required: number;
  readonly timeoutMs: number;
  /**
   * The client reconnected between the write and WAIT's reply: WAIT ran on
   * a connection that had written nothing, so its count proved nothing.
   */
  readonly connectionChanged: boolean;
  /**
   * Milliseconds from sending the write to WAIT's answer, as the library
   * measured them: a server checks WAIT's timeout on its cron tick, so with
   * Redis's default hz 10 this is up to 100 ms more than `timeoutMs`.
   */
  readonly waitedMs: number | undefined;

  constructor(node: string, acknowledged: number, required: number, timeoutMs: number, connectionChanged = false, waitedMs?: number) {
    const waited = waitedMs === undefined ? '' : ` (WAIT answered after ${waitedMs} ms)`;
    super(
      ErrorCode.REPLICA_SYNC,
      connectionChanged
        ? `${node}: the connection was replaced before WAIT answered, so whether ${required} ${required === 1 ? 'replica has' : 'replicas have'} the write is unknown`
        : `${node}: ${acknowledged} of ${required} ${required === 1 ? 'replica' : 'replicas'} acknowledged within ${timeoutMs} ms${waited}`,
    );
    this.name = 'ReplicaSyncError';
    this.node = node;
    this.acknowledged = acknowledged;
    this.required = required;
    this.timeoutMs = timeoutMs;
    this.connectionChanged = connectionChanged;
    this.waitedMs = waitedMs;
  }
}

/**
 * A semaphore's acquire stated a limit other than the one the nodes hold for
 * the resource, whose holders counted on theirs: refused, never changed.
 */
export class LimitMismatchError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.LIMIT_MISMATCH;
  readonly resource: string;
  /** The limit this call stated. */
  readonly expected: number;
  /** The limit a node holds for the resource. */
  readonly found: number;
  /** The node that holds `found`. */
  readonly node: string;

  constructor(resource: string, expected: number, found: number, node: string) {
    super(ErrorCode.LIMIT_MISMATCH, `"${resource}" has limit ${found} on ${node}, not ${expected}: holders counted on ${found}`);
    this.name = 'LimitMismatchError';
    this.resource = resource;
    this.expected = expected;
    this.found = found;
    this.node = node;
  }
}

/**
 * A reader asked for the write lock of the resource it reads. Two readers
 * doing so would each wait for the other to leave: refused at once instead.
 */
export class UpgradeRefusedError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.UPGRADE_REFUSED;
  readonly resource: string;

  constructor(resource: string) {
    super(ErrorCode.UPGRADE_REFUSED, `"${resource}": a reader cannot upgrade to the write lock; release the read lock, then acquire the write lock`);
    this.name = 'UpgradeRefusedError';
    this.resource = resource;
  }
}

/**
 * The locker was closed (`locker.close()`, or `await using` ending): what
 * its acquires reject with from then on, what acquires still waiting
 * rejected with, and the reason the signal of each lock that close()
 * released aborts with (a using() routine still running sees it there).
 */
export class LockerClosedError extends QuorumLockError {
  declare readonly code: typeof ErrorCode.LOCKER_CLOSED;

  constructor() {
    super(ErrorCode.LOCKER_CLOSED, 'The locker was closed: it takes no more locks, and released the ones it held');
    this.name = 'LockerClosedError';
  }
}

const CONNECTION_PROBLEMS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
};

// The client's own message repeats the address the node is already named by.
function connectionProblem(error: Error): string {
  const code = (error as { code?: unknown }).code;
  const known = typeof code === 'string' ? CONNECTION_PROBLEMS[code] : undefined;
  return known === undefined ? error.message : `${known} (${code as string})`;
}

// The `satisfies` clause fails the build if a class is missing or carries
// another code than its key, so the narrowing below cannot lie.
const ERROR_CLASSES = Object.freeze({
  [ErrorCode.INVALID_ARGUMENT]: InvalidArgumentError,
  [ErrorCode.LOCK_HELD]: LockHeldError,
  [ErrorCode.QUORUM_UNREACHABLE]: QuorumUnreachableError,
  [ErrorCode.VALIDITY_EXHAUSTED]: ValidityExhaustedError,
  [ErrorCode.LOCK_LOST]: LockLostError,
  [ErrorCode.LOCK_EXPIRED]: LockExpiredError,
  [ErrorCode.LOCK_RELEASED]: LockReleasedError,
  [ErrorCode.ABORTED]: AbortedError,
  [ErrorCode.OVERLAPPING_HOLD]: OverlappingHoldError,
  [ErrorCode.NODE_TIMEOUT]: NodeTimeoutError,
  [ErrorCode.NODE_CONNECTION]: NodeConnectionError,
  [ErrorCode.REPLICA_SYNC]: ReplicaSyncError,
  [ErrorCode.LIMIT_MISMATCH]: LimitMismatchError,
  [ErrorCode.UPGRADE_REFUSED]: UpgradeRefusedError,
  [ErrorCode.LOCKER_CLOSED]: LockerClosedError,
} as const satisfies { readonly [C in ErrorCode]: abstract new (...args: never[]) => QuorumLockError & { readonly code: C } });

/** The error class of each code: `QuorumLockErrorFor<typeof ErrorCode.LOCK_HELD>` is `LockHeldError`. */
export type QuorumLockErrorFor<C extends ErrorCode> = InstanceType<(typeof ERROR_CLASSES)[C]>;

/**
 * True for any error quorumlock made; with a code (or a union of codes in
 * TypeScript), true only for that code, and narrows to its class, so
 * `isQuorumLockError(error, ErrorCode.LOCK_HELD) && error.heldOnNodes` compiles.
 */
export function isQuorumLockError(error: unknown): error is QuorumLockError;
export function isQuorumLockError<C extends ErrorCode>(error: unknown, code: C): error is QuorumLockErrorFor<C>;
export function isQuorumLockError(error: unknown, code?: ErrorCode): boolean {
  if (code === undefined) return error instanceof QuorumLockError;
  // A misspelt code would otherwise make the check false forever, silently.
  if (!Object.hasOwn(ERROR_CLASSES, code)) {
    throw new InvalidArgumentError('code', `expected one of ErrorCode's values, got ${JSON.stringify(code)}`);
  }
  return error instanceof ERROR_CLASSES[code];
}

// A node's own errors already begin with its name.
function describeFailure(outcome: NodeOutcome): string {
  const error = outcome.error;
  if (error instanceof NodeTimeoutError || error instanceof NodeConnectionError || error instanceof ReplicaSyncError) return error.message;
  return `${outcome.node}: ${error?.message ?? outcome.status}`;
}

function formatResources(resources: readonly string[]): string {
  return resources.length === 1 ? `"${resources[0]}"` : `[${resources.map((r) => `"${r}"`).join(', ')}]`;
}
