import type { NodeOutcome } from './outcome.js';
import { countStatus } from './outcome.js';

/**
 * Stable error codes. Branch on `error.code`, never on messages: messages may
 * change between versions, codes do not. Each code has one error class
 * ({@link QuorumLockErrorFor}); {@link isQuorumLockError} checks a code and
 * narrows to that class.
 *
 * @enum
 */
export const ErrorCode = Object.freeze({
  /** {@link InvalidArgumentError}: a bad argument or option, thrown before any request. */
  INVALID_ARGUMENT: 'QUORUMLOCK_INVALID_ARGUMENT',
  /** {@link LockHeldError}: another holder has the resource. */
  LOCK_HELD: 'QUORUMLOCK_LOCK_HELD',
  /** {@link QuorumUnreachableError}: too many nodes failed or timed out for a quorum. */
  QUORUM_UNREACHABLE: 'QUORUMLOCK_QUORUM_UNREACHABLE',
  /** {@link ValidityExhaustedError}: a quorum agreed, but no validity was left. */
  VALIDITY_EXHAUSTED: 'QUORUMLOCK_VALIDITY_EXHAUSTED',
  /** {@link LockLostError}: the nodes no longer hold the lock's value. */
  LOCK_LOST: 'QUORUMLOCK_LOCK_LOST',
  /** {@link LockExpiredError}: the lock's validity ran out before an extend. */
  LOCK_EXPIRED: 'QUORUMLOCK_LOCK_EXPIRED',
  /** {@link LockReleasedError}: the reason of a released lock's signal. */
  LOCK_RELEASED: 'QUORUMLOCK_LOCK_RELEASED',
  /** {@link AbortedError}: the caller's AbortSignal fired. */
  ABORTED: 'QUORUMLOCK_ABORTED',
  /** {@link OverlappingHoldError}: a nested call asked for resources that overlap the held ones. */
  OVERLAPPING_HOLD: 'QUORUMLOCK_OVERLAPPING_HOLD',
  /** {@link NodeTimeoutError}: one node did not answer within `nodeTimeoutMs` (a node's cause in `outcomes`). */
  NODE_TIMEOUT: 'QUORUMLOCK_NODE_TIMEOUT',
  /** {@link NodeConnectionError}: one node's client could not connect (a node's cause in `outcomes`). */
  NODE_CONNECTION: 'QUORUMLOCK_NODE_CONNECTION',
  /** {@link ReplicaSyncError}: too few replicas confirmed a write under `syncReplicas` (a node's cause in `outcomes`). */
  REPLICA_SYNC: 'QUORUMLOCK_REPLICA_SYNC',
  /** {@link LimitMismatchError}: a semaphore's `limit` differs from the one the nodes hold. */
  LIMIT_MISMATCH: 'QUORUMLOCK_LIMIT_MISMATCH',
  /** {@link UpgradeRefusedError}: a reader asked for the write lock of what it reads. */
  UPGRADE_REFUSED: 'QUORUMLOCK_UPGRADE_REFUSED',
  /** {@link LockerClosedError}: the locker's `close()` was called; it takes no more locks. */
  LOCKER_CLOSED: 'QUORUMLOCK_LOCKER_CLOSED',
} as const);

/** One of the {@link ErrorCode} values, as `error.code` carries it: `'QUORUMLOCK_LOCK_HELD'` and so on. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Base class of every error quorumlock throws or aborts a signal with. Branch
 * on `code` (or use {@link isQuorumLockError}); `cause`, where set, is the
 * underlying error.
 */
export class QuorumLockError extends Error {
  /** The stable code of this error's class, one of {@link ErrorCode}. */
  readonly code: ErrorCode;

  /** @internal The library makes its errors; each subclass passes its own code. */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QuorumLockError';
    this.code = code;
  }
}

/** A bad argument or option; `argument` names it (`ttlMs`, `resources[1]`, `options.driftFactor`). */
export class InvalidArgumentError extends QuorumLockError {
  /** Always `'QUORUMLOCK_INVALID_ARGUMENT'` ({@link ErrorCode}.INVALID_ARGUMENT). */
  declare readonly code: typeof ErrorCode.INVALID_ARGUMENT;
  /** The argument or option at fault, as the caller wrote it: `ttlMs`, `resources[1]`, `options.retry.factor`. */
  readonly argument: string;

  /** @internal Thrown by the library, not made by users. */
  constructor(argument: string, problem: string) {
    super(ErrorCode.INVALID_ARGUMENT, `Invalid ${argument}: ${problem}`);
    this.name = 'InvalidArgumentError';
    this.argument = argument;
  }
}

/** Fields shared by errors that come from a vote among nodes. */
interface VoteDetails {
  /** The resources asked for. */
  readonly resources: readonly string[];
  /** Nodes configured (not only those that answered). */
  readonly nodeCount: number;
  /** Votes needed: floor(nodeCount / 2) + 1. */
  readonly quorum: number;
  /** Each node's answer to the attempt. */
  readonly outcomes: readonly NodeOutcome[];
}

function describeVote(details: VoteDetails): string {
  return `${countStatus(details.outcomes, 'ok')} of ${details.nodeCount} nodes agreed, quorum is ${details.quorum}`;
}

/**
 * Another holder has the resource on enough nodes that a quorum is impossible.
 * acquire() rejects with it once its retries or `acquireTimeoutMs` are used
 * up; tryAcquire() resolves to null instead. Wait longer, or give up.
 */
export class LockHeldError extends QuorumLockError {
  /** Always `'QUORUMLOCK_LOCK_HELD'` ({@link ErrorCode}.LOCK_HELD). */
  declare readonly code: typeof ErrorCode.LOCK_HELD;
  /** The resources asked for. */
  readonly resources: readonly string[];
  /** Votes needed: floor(N / 2) + 1 of the N nodes configured. */
  readonly quorum: number;
  /** Each node's answer to the last attempt (`held` where another value holds a key). */
  readonly outcomes: readonly NodeOutcome[];
  /** Nodes on which another value holds the resource. */
  readonly heldOnNodes: number;

  /** @internal Thrown by the library, not made by users. */
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

/**
 * Too many nodes failed or timed out for a quorum; `outcomes` has each node's
 * cause ({@link NodeTimeoutError}, {@link NodeConnectionError},
 * {@link ReplicaSyncError} or the client's error), and `cause` is the first.
 */
export class QuorumUnreachableError extends QuorumLockError {
  /** Always `'QUORUMLOCK_QUORUM_UNREACHABLE'` ({@link ErrorCode}.QUORUM_UNREACHABLE). */
  declare readonly code: typeof ErrorCode.QUORUM_UNREACHABLE;
  /** The resources asked for. */
  readonly resources: readonly string[];
  /** Votes needed: floor(N / 2) + 1 of the N nodes configured. */
  readonly quorum: number;
  /** Each node's answer (`error` and `timeout` carry their `error`). */
  readonly outcomes: readonly NodeOutcome[];

  /** @internal Thrown by the library, not made by users. */
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

/**
 * A quorum agreed to an acquire or an extend, but the round trips took so long
 * that no validity was left; an acquire's keys are released again. Use a
 * longer TTL, or look at what slows the nodes (the `ms` of each outcome).
 */
export class ValidityExhaustedError extends QuorumLockError {
  /** Always `'QUORUMLOCK_VALIDITY_EXHAUSTED'` ({@link ErrorCode}.VALIDITY_EXHAUSTED). */
  declare readonly code: typeof ErrorCode.VALIDITY_EXHAUSTED;
  /** The resources asked for. */
  readonly resources: readonly string[];
  /** Validity left when the quorum was reached, in milliseconds: 0 or less. */
  readonly validityMs: number;
  /** Each node's answer. */
  readonly outcomes: readonly NodeOutcome[];

  /** @internal Thrown by the library, not made by users. */
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

/**
 * The lock is no longer ours: a quorum of nodes no longer holds its value (it
 * expired there, or another holder took it). extend() and reenter() reject
 * with it, and a lock's `signal` aborts with it. Stop the work the lock guarded.
 */
export class LockLostError extends QuorumLockError {
  /** Always `'QUORUMLOCK_LOCK_LOST'` ({@link ErrorCode}.LOCK_LOST). */
  declare readonly code: typeof ErrorCode.LOCK_LOST;
  /** The lock's resources. */
  readonly resources: readonly string[];
  /** Each node's answer to the extend or check that found the lock gone. */
  readonly outcomes: readonly NodeOutcome[];

  /** @internal Thrown by the library, not made by users. */
  constructor(resources: readonly string[], outcomes: readonly NodeOutcome[], cause?: unknown) {
    super(ErrorCode.LOCK_LOST, `Lock on ${formatResources(resources)} was lost`, { cause });
    this.name = 'LockLostError';
    this.resources = resources;
    this.outcomes = outcomes;
  }
}

/**
 * The lock's validity ran out on the library's clock before it was extended:
 * extend() rejects with it without a round trip, and the lock's `signal`
 * aborts with it.
 */
export class LockExpiredError extends QuorumLockError {
  /** Always `'QUORUMLOCK_LOCK_EXPIRED'` ({@link ErrorCode}.LOCK_EXPIRED). */
  declare readonly code: typeof ErrorCode.LOCK_EXPIRED;
  /** The lock's resources. */
  readonly resources: readonly string[];

  /** @internal Thrown by the library, not made by users. */
  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_EXPIRED, `Lock on ${formatResources(resources)} has expired`);
    this.name = 'LockExpiredError';
    this.resources = resources;
  }
}

/**
 * The reason a lock's signal aborts once the lock was released; extend() of a
 * released lock rejects with it.
 */
export class LockReleasedError extends QuorumLockError {
  /** Always `'QUORUMLOCK_LOCK_RELEASED'` ({@link ErrorCode}.LOCK_RELEASED). */
  declare readonly code: typeof ErrorCode.LOCK_RELEASED;
  /** The lock's resources. */
  readonly resources: readonly string[];

  /** @internal Thrown by the library, not made by users. */
  constructor(resources: readonly string[]) {
    super(ErrorCode.LOCK_RELEASED, `Lock on ${formatResources(resources)} was released`);
    this.name = 'LockReleasedError';
    this.resources = resources;
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. Nothing stays held. */
export class AbortedError extends QuorumLockError {
  /** Always `'QUORUMLOCK_ABORTED'` ({@link ErrorCode}.ABORTED). */
  declare readonly code: typeof ErrorCode.ABORTED;
  /** @internal Thrown by the library, not made by users. */
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
  /** Always `'QUORUMLOCK_OVERLAPPING_HOLD'` ({@link ErrorCode}.OVERLAPPING_HOLD). */
  declare readonly code: typeof ErrorCode.OVERLAPPING_HOLD;
  /** The resources the nested call asked for. */
  readonly resources: readonly string[];
  /** The resources the enclosing lock holds. */
  readonly heldResources: readonly string[];

  /** @internal Thrown by the library, not made by users. */
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

/**
 * One node gave no reply within the node timeout. Found as a node's `error` in
 * the `outcomes` of another error, not thrown by itself; the request may still
 * have been applied on that node.
 */
export class NodeTimeoutError extends QuorumLockError {
  /** Always `'QUORUMLOCK_NODE_TIMEOUT'` ({@link ErrorCode}.NODE_TIMEOUT). */
  declare readonly code: typeof ErrorCode.NODE_TIMEOUT;
  /** The node's label: `host:port`, or the name given for it. */
  readonly node: string;
  /** The time the node had, in milliseconds. */
  readonly timeoutMs: number;

  /** @internal Thrown by the library, not made by users. */
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
  /** Always `'QUORUMLOCK_NODE_CONNECTION'` ({@link ErrorCode}.NODE_CONNECTION). */
  declare readonly code: typeof ErrorCode.NODE_CONNECTION;
  /** The node's label: `host:port`, or the name given for it. */
  readonly node: string;

  /** @internal Thrown by the library, not made by users. */
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
 * the key would hand the lock to someone else. Found as a node's `error` in
 * the `outcomes` of another error.
 */
export class ReplicaSyncError extends QuorumLockError {
  /** Always `'QUORUMLOCK_REPLICA_SYNC'` ({@link ErrorCode}.REPLICA_SYNC). */
  declare readonly code: typeof ErrorCode.REPLICA_SYNC;
  /** The node's label: `host:port`, or the name given for it. */
  readonly node: string;
  /** Replicas that acknowledged the write. */
  readonly acknowledged: number;
  /** Replicas that had to. */
  readonly required: number;
  /** WAIT's timeout, in milliseconds (`syncReplicas.timeoutMs`). */
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

  /** @internal Thrown by the library, not made by users. */
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
  /** Always `'QUORUMLOCK_LIMIT_MISMATCH'` ({@link ErrorCode}.LIMIT_MISMATCH). */
  declare readonly code: typeof ErrorCode.LIMIT_MISMATCH;
  /** The semaphore's resource. */
  readonly resource: string;
  /** The limit this call stated. */
  readonly expected: number;
  /** The limit a node holds for the resource. */
  readonly found: number;
  /** The node that holds `found`. */
  readonly node: string;

  /** @internal Thrown by the library, not made by users. */
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
  /** Always `'QUORUMLOCK_UPGRADE_REFUSED'` ({@link ErrorCode}.UPGRADE_REFUSED). */
  declare readonly code: typeof ErrorCode.UPGRADE_REFUSED;
  /** The resource read and asked to be written. */
  readonly resource: string;

  /** @internal Thrown by the library, not made by users. */
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

/**
 * The error class of each code: `QuorumLockErrorFor<typeof ErrorCode.LOCK_HELD>`
 * is {@link LockHeldError}; for a union of codes, the union of their classes.
 */
export type QuorumLockErrorFor<C extends ErrorCode> = ErrorOfCode[C];

// A mapped type, not InstanceType<…> in the alias itself: TypeScript then
// keeps the alias's name in signatures (and the reference shows it).
type ErrorOfCode = { readonly [C in ErrorCode]: InstanceType<(typeof ERROR_CLASSES)[C]> };

/**
 * True for any error quorumlock made; with a code (or a union of codes in
 * TypeScript), true only for that code, and narrows to its class, so
 * `isQuorumLockError(error, ErrorCode.LOCK_HELD) && error.heldOnNodes` compiles.
 *
 * @param error - Any value, typically what a `catch` caught.
 * @returns Whether `error` is a {@link QuorumLockError}.
 */
export function isQuorumLockError(error: unknown): error is QuorumLockError;
/**
 * True when `error` is quorumlock's error with `code`, and narrows it to that
 * code's class ({@link QuorumLockErrorFor}).
 *
 * @param error - Any value, typically what a `catch` caught.
 * @param code - One of {@link ErrorCode}'s values.
 * @returns Whether `error` is the error class of `code`.
 * @throws {@link InvalidArgumentError} when `code` is not one of {@link ErrorCode}'s values,
 * which would otherwise make the check false forever.
 */
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
