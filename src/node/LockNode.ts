import { whenAborted } from '../shared/abortListeners.js';
import type { Clock } from '../clock/Clock.js';
import { AbortedError, NodeConnectionError, NodeTimeoutError } from '../shared/errors.js';
import type { LinePlace, LineReply } from '../scripts/acquire.js';
import type { KeyState } from '../scripts/inspect.js';
import type { Announce, Rejoin, UndoneInLine } from '../scripts/release.js';
import type { RenewalEntry } from '../scripts/extendMany.js';
import type { NodeBackend } from './NodeBackend.js';
import type { NodeOutcome, NodeStatus } from '../shared/outcome.js';
import { LateDeletes } from './LateDeletes.js';
import { LateWrites } from './LateWrites.js';
import { type ConnectWait, RequestDeadline } from './RequestDeadline.js';

/** One node's answer to a release: a {@link NodeOutcome} with the keys it deleted. */
export interface ReleaseOutcome extends NodeOutcome {
  /** Keys deleted on this node (0 for expired, foreign, error or timeout). */
  readonly released: number;
}

export interface UndoOutcome extends ReleaseOutcome {
  /** See UndoneInLine.rejoinedAtUs. */
  readonly rejoinedAtUs?: number | undefined;
}

export interface FencedOutcome extends NodeOutcome {
  /** With status `ok`: this node's token for each resource. */
  readonly tokens?: readonly bigint[];
  /** With status `held`, after an attempt from a wait line: the waiter's ticket on this node. */
  readonly ticket?: number;
  /** With `ticket`: the node's server time in µs when it gave that place, if it said. */
  readonly serverUs?: number;
  /** With status `held`, after a probing try (PrimitiveRequests.acquire): no other try could be granted on this node now. */
  readonly full?: boolean;
  /** With status `ok`, after a try where the node chose the keys (PrimitiveRequests.acquire's `choose`): the keys it took. */
  readonly chosen?: readonly string[];
}

export interface VerifyOutcome extends NodeOutcome {
  /** With status `ok`: the smallest PTTL of the keys on this node. */
  readonly pttlMs?: number;
}

/**
 * How long a request may take: a number of milliseconds, or the deadline it
 * shares with the requests sent with it to the other nodes.
 */
export type RequestLimit = number | RequestDeadline;

/**
 * One kind of request, made once and sent to every node of a vote: how to
 * send it, how to read the reply, and the outcome to report (the reply is
 * undefined after an error or a timeout).
 */
export interface NodeRequest<T, O extends NodeOutcome> {
  /**
   * An acquire's outcome waits for a connecting node (within the call's
   * ConnectWait), and the request is never sent once its outcome was given.
   * Other requests give a connecting node their usual timeout, but still go
   * out once it connects, in order: the undo of an acquire must follow it.
   */
  readonly awaitsConnection?: true;
  /** The lock value (or a batch's values) whose keys this request may write (acquire, extend, fence, renewals): see LateWrites. */
  readonly writes?: string | readonly string[];
  /** The lock value whose keys this request releases: `afterLateWrite` is sent after the lock's late writes. */
  readonly releases?: string;
  /** The value whose keys this request deletes (a release, an undo): see LateDeletes. */
  readonly deletes?: string;
  /** A plain release of the same keys (no rejoin of a wait line): what follows a late write. */
  readonly afterLateWrite?: (backend: NodeBackend) => Promise<unknown>;
  send(backend: NodeBackend): Promise<T>;
  interpret(reply: T): NodeStatus;
  describe(node: string, status: NodeStatus, ms: number, reply: T | undefined, error: Error | undefined): O;
}

// Outcomes are built field by field: object rest/spread here was a visible
// share of an uncontended acquire on five nodes.
function plainOutcome(node: string, status: NodeStatus, ms: number, _reply: unknown, error: Error | undefined): NodeOutcome {
  return error ? { node, status, ms, error } : { node, status, ms };
}

function okOrHeld(ok: boolean): NodeStatus {
  return ok ? 'ok' : 'held';
}

export function acquireRequest(keys: readonly string[], value: string, ttlMs: number): NodeRequest<boolean, NodeOutcome> {
  return { awaitsConnection: true, writes: value, send: (backend) => backend.acquire(keys, value, ttlMs), interpret: okOrHeld, describe: plainOutcome };
}

/** An attempt from the wait lines (NodeBackend.acquireInLine); a node without lines takes a plain attempt. */
export function acquireInLineRequest(
  keys: readonly string[],
  value: string,
  ttlMs: number,
  fencing: boolean,
  place: LinePlace,
): NodeRequest<LineReply, FencedOutcome> {
  return {
    awaitsConnection: true,
    writes: value,
    send: (backend) => {
      if (backend.acquireInLine) return backend.acquireInLine(keys, value, ttlMs, fencing, place);
      if (fencing) return backend.acquireFenced!(keys, value, ttlMs).then((tokens) => (tokens ? { granted: true, tokens } : { granted: false, ticket: 0 }));
      return backend.acquire(keys, value, ttlMs).then((granted) => (granted ? { granted: true } : { granted: false, ticket: 0 }));
    },
    interpret: (reply) => (reply.granted ? 'ok' : 'held'),
    describe: (node, status, ms, reply, error): FencedOutcome => {
      if (reply?.granted === true) return reply.tokens ? { node, status, ms, tokens: reply.tokens } : { node, status, ms };
      if (reply?.granted === false) {
        return reply.serverUs === undefined ? { node, status, ms, ticket: reply.ticket } : { node, status, ms, ticket: reply.ticket, serverUs: reply.serverUs };
      }
      return plainOutcome(node, status, ms, undefined, error);
    },
  };
}

export function acquireFencedRequest(keys: readonly string[], value: string, ttlMs: number): NodeRequest<bigint[] | null, FencedOutcome> {
  return {
    awaitsConnection: true,
    writes: value,
    send: (backend) => backend.acquireFenced!(keys, value, ttlMs),
    interpret: (tokens) => (tokens ? 'ok' : 'held'),
    describe: (node, status, ms, tokens, error): FencedOutcome =>
      tokens ? { node, status, ms, tokens } : plainOutcome(node, status, ms, undefined, error),
  };
}

export function fenceRequest(keys: readonly string[], value: string, tokens: readonly bigint[]): NodeRequest<boolean, NodeOutcome> {
  return { writes: value, send: (backend) => backend.fence!(keys, value, tokens), interpret: okOrHeld, describe: plainOutcome };
}

export function extendRequest(keys: readonly string[], value: string, ttlMs: number): NodeRequest<boolean, NodeOutcome> {
  return { writes: value, send: (backend) => backend.extend(keys, value, ttlMs), interpret: okOrHeld, describe: plainOutcome };
}

export interface RenewalsOutcome extends NodeOutcome {
  /** With status `ok`: whether each lock of the batch was extended, in order. */
  readonly extended?: readonly boolean[];
}

/**
 * Many locks' extends in one request per node (NodeBackend.extendMany): the
 * request is `ok` once the node answered for all of them; renewalOutcome
 * tells each lock its own.
 */
export function extendManyRequest(entries: readonly RenewalEntry[]): NodeRequest<readonly boolean[], RenewalsOutcome> {
  return renewalsRequest(
    entries.map((entry) => entry.value),
    (backend) =>
      backend.extendMany
        ? backend.extendMany(entries)
        : Promise.all(entries.map((entry) => backend.extend(entry.keys, entry.value, entry.ttlMs))),
  );
}

/**
 * A batch of renewals as one request per node, whatever sends it (the
 * mutex's extendMany, another primitive's renewEach): `ok` once the node
 * answered for every holder, whose own answer renewalOutcome tells.
 * `values`: the holders' values, whose keys the renewals write.
 */
export function renewalsRequest(
  values: readonly string[],
  send: (backend: NodeBackend) => Promise<readonly boolean[]>,
): NodeRequest<readonly boolean[], RenewalsOutcome> {
  return {
    writes: values,
    send,
    interpret: () => 'ok',
    describe: (node, status, ms, extended, error): RenewalsOutcome =>
      status === 'ok' && extended !== undefined ? { node, status, ms, extended } : plainOutcome(node, status, ms, undefined, error),
  };
}

/**
 * The `index`-th lock's outcome in a batch: the node's answer for it, or the
 * batch's error or timeout, which counts against every lock of the batch.
 */
export function renewalOutcome(batch: RenewalsOutcome, index: number): NodeOutcome {
  const { node, status, ms, extended, error } = batch;
  if (status === 'ok') return { node, status: extended?.[index] === true ? 'ok' : 'held', ms };
  return error ? { node, status, ms, error } : { node, status, ms };
}

/** Steps out of the wait lines (NodeBackend.leave); nothing to do on a node without them. */
export function leaveRequest(keys: readonly string[], value: string, acquired: boolean): NodeRequest<number, NodeOutcome> {
  return {
    send: (backend) => backend.leave?.(keys, value, acquired) ?? Promise.resolve(0),
    interpret: () => 'ok',
    describe: plainOutcome,
  };
}

/** Whether every key holds `value`, and its smallest PTTL (see verify.lua); waits for a connecting node like an acquire. */
export function verifyRequest(keys: readonly string[], value: string): NodeRequest<number, VerifyOutcome> {
  return {
    awaitsConnection: true,
    send: (backend) => (backend.verify ? backend.verify(keys, value) : Promise.reject(new Error(`${backend.name} cannot verify a lock's value`))),
    interpret: (pttlMs) => (pttlMs > 0 ? 'ok' : 'held'),
    describe: (node, status, ms, pttlMs, error): VerifyOutcome =>
      status === 'ok' && pttlMs !== undefined ? { node, status, ms, pttlMs } : plainOutcome(node, status, ms, undefined, error),
  };
}

/** One node's answer to inspect(): a {@link NodeOutcome} with what it stores. */
export interface InspectOutcome extends NodeOutcome {
  /** With status `ok`: each resource as this node stores it, in the order asked. */
  readonly keys?: readonly KeyState[];
}

/** Reads the resources' state (NodeBackend.inspect), changing nothing; waits for a connecting node like an acquire. */
export function inspectRequest(resources: readonly string[]): NodeRequest<readonly KeyState[], InspectOutcome> {
  return {
    awaitsConnection: true,
    send: (backend) => (backend.inspect ? backend.inspect(resources) : Promise.reject(new Error(`${backend.name} cannot be inspected`))),
    interpret: () => 'ok',
    describe: (node, status, ms, keys, error): InspectOutcome =>
      status === 'ok' && keys !== undefined ? { node, status, ms, keys } : plainOutcome(node, status, ms, undefined, error),
  };
}

function releaseStatus(count: number): NodeStatus {
  return count > 0 ? 'ok' : 'held';
}

function releaseOutcome(node: string, status: NodeStatus, ms: number, count: number | undefined, error: Error | undefined): ReleaseOutcome {
  return error ? { node, status, ms, error, released: 0 } : { node, status, ms, released: count ?? 0 };
}

/**
 * `announce`: see NodeBackend.release. `final`: the lock's own
 * release (by its holder, or at its end), which is sent again after the
 * lock's late writes; never the undo of one attempt, whose value the next
 * attempt of the same acquire takes again (a wait line may even hand it the
 * keys without a write of ours).
 */
export function releaseRequest(
  keys: readonly string[],
  value: string,
  announce: Announce = 'marked',
  final = false,
): NodeRequest<number, ReleaseOutcome> {
  // One shape for every release, final or not: a spread of an optional part
  // went through V8's slow object-clone path on every release (~5 µs each).
  return {
    releases: final ? value : undefined,
    afterLateWrite: final ? (backend: NodeBackend) => backend.release(keys, value) : undefined,
    deletes: value,
    send: (backend) => backend.release(keys, value, announce),
    interpret: releaseStatus,
    describe: releaseOutcome,
  };
}

/** The undo of a waiter's failed attempt, as NodeBackend.undoInLine (a plain undo where the backend lacks it). */
export function undoInLineRequest(keys: readonly string[], value: string, rejoin: Rejoin): NodeRequest<UndoneInLine, UndoOutcome> {
  return {
    deletes: value,
    send: (backend) => backend.undoInLine?.(keys, value, rejoin) ?? backend.release(keys, value, 'none').then((released) => ({ released })),
    interpret: (undone) => releaseStatus(undone.released),
    describe: (node, status, ms, undone, error) =>
      error || !undone ? releaseOutcome(node, status, ms, 0, error) : { node, status, ms, released: undone.released, rejoinedAtUs: undone.rejoinedAtUs },
  };
}

/** A primitive's release request as its lock's own release (see releaseRequest's `final`): sent again after the lock's late writes. */
export function finalRelease<O extends ReleaseOutcome>(request: NodeRequest<number, O>, value: string): NodeRequest<number, O> {
  // Field by field, as a spread copy would not be (V8's slow clone path, on
  // every release); Complete makes a field NodeRequest gains a compile error here.
  const copy: Complete<NodeRequest<number, O>> = {
    awaitsConnection: request.awaitsConnection,
    writes: request.writes,
    releases: value,
    deletes: request.deletes,
    afterLateWrite: (backend) => request.send(backend),
    send: request.send,
    interpret: request.interpret,
    describe: request.describe,
  };
  return copy;
}

/** Every field of T named, the optional ones too (their value may be undefined). */
type Complete<T> = { [K in keyof Required<T>]: T[K] };

/**
 * One node as the coordinator sees it: every request has a timeout and
 * ends in a NodeOutcome, never a rejection. The timeout is ours, not the
 * client's, so a dead node cannot stall a call even while ioredis keeps the
 * command in its offline queue. A reply that comes after the timeout is
 * ignored: it never counts as success.
 */
export class LockNode {
  /** The client has been ready once: no request waits for a connection any more. */
  #connected: boolean;
  /** While a write is out late here: stops listening for scripts resent after NOSCRIPT. */
  #stopResendWatch: (() => void) | undefined;
  readonly #lateWrites = new LateWrites(() => {
    this.#stopResendWatch?.();
    this.#stopResendWatch = undefined;
  });
  readonly #lateDeletes = new LateDeletes();

  constructor(
    readonly backend: NodeBackend,
    private readonly clock: Clock,
  ) {
    this.#connected = backend.connection === undefined || backend.connection.isOpen();
  }

  get name(): string {
    return this.backend.name;
  }

  /**
   * The acquire that wrote `value` ended without a lock on these keys:
   * `undo` is sent again after each of its writes still out here (LateWrites).
   */
  abandon(value: string, undo: (backend: NodeBackend) => Promise<unknown>): void {
    if (this.#lateWrites.size > 0) this.#lateWrites.abandon(value, () => undo(this.backend));
  }

  /** Sends `request` (one of the …Request functions above); resolves with its outcome, never rejects. */
  ask<T, O extends NodeOutcome>(request: NodeRequest<T, O>, limit: RequestLimit): Promise<O> {
    return new Promise((resolve) => this.send(request, limit, resolve));
  }

  /**
   * Sends `request` and hands its outcome to `deliver`, exactly once: the
   * reply, the error, or the timeout, whichever comes first. Never throws.
   * A vote uses this directly, so that its requests cost no promise each.
   */
  send<T, O extends NodeOutcome>(request: NodeRequest<T, O>, limit: RequestLimit, deliver: (outcome: O) => void): void {
    const clock = this.clock;
    const deadline = typeof limit === 'number' ? new RequestDeadline(clock, limit) : limit;
    if (!this.#connected && !this.#isConnected()) {
      this.#sendOnceConnected(request, deadline, deliver);
      return;
    }
    this.#dispatch(request, deadline, deliver);
  }

  #isConnected(): boolean {
    this.#connected = this.backend.connection?.isOpen() ?? true;
    return this.#connected;
  }

  /**
   * The client is making its first connection. The validity of an acquire
   * still counts from before this wait (its start was read before the vote),
   * so waiting only shortens it.
   */
  #sendOnceConnected<T, O extends NodeOutcome>(request: NodeRequest<T, O>, deadline: RequestDeadline, deliver: (outcome: O) => void): void {
    const clock = this.clock;
    const connection = this.backend.connection as NonNullable<NodeBackend['connection']>;
    const waitStart = clock.now();
    let given = false;
    const give = (outcome: O): void => {
      if (given) return;
      given = true;
      stopWaiting();
      deliver(outcome);
    };
    const giveUp = (status: NodeStatus, error: Error): void =>
      give(request.describe(this.name, status, clock.now() - waitStart, undefined, error));
    const connectWait = request.awaitsConnection ? deadline.connectWait : undefined;
    const stopWaiting =
      connectWait === undefined
        ? deadline.track(() => giveUp('timeout', new NodeTimeoutError(this.name, deadline.timeoutMs)))
        : waitForConnection(connectWait, clock, this.name, giveUp);
    connection.whenOpen(
      () => {
        this.#connected = true;
        if (!given) {
          stopWaiting();
          // The request's own timeout starts now that it can be sent.
          this.#dispatch(request, new RequestDeadline(clock, deadline.timeoutMs), give);
        } else if (!request.awaitsConnection) {
          const late = request.send(this.backend);
          late.catch(() => {});
          this.#trackLate(request, late);
        }
      },
      (error) => giveUp('error', error),
    );
  }

  #dispatch<T, O extends NodeOutcome>(request: NodeRequest<T, O>, deadline: RequestDeadline, deliver: (outcome: O) => void): void {
    const clock = this.clock;
    if (this.#lateDeletes.size > 0 && this.#lateDeletes.pending(writtenValues(request))) {
      this.#refuseBehindLateDelete(request, deadline, deliver);
      return;
    }
    let pending: Promise<T>;
    try {
      pending = request.send(this.backend);
    } catch (error) {
      deliver(request.describe(this.name, 'error', clock.now() - deadline.sentAt, undefined, asError(error)));
      return;
    }
    // The bookkeeping comes after the request is written: it then overlaps
    // the round trip instead of delaying it. No reply can come before it,
    // since a promise settles no earlier than the next microtask.
    let settled = false;
    const finish = (status: NodeStatus, reply: T | undefined, error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      untrack();
      deliver(request.describe(this.name, status, clock.now() - deadline.sentAt, reply, error));
    };
    if (this.#lateWrites.size > 0) {
      for (const value of writtenValues(request)) this.#lateWrites.rewrite(value);
      const afterLateWrite = request.afterLateWrite;
      if (request.releases !== undefined && afterLateWrite !== undefined) {
        this.#lateWrites.releaseAfter(request.releases, () => afterLateWrite(this.backend));
      }
    }
    const untrack = deadline.track(() => {
      finish('timeout', undefined, new NodeTimeoutError(this.name, deadline.timeoutMs));
      this.#trackLate(request, pending);
      if (request.deletes !== undefined) this.#lateDeletes.track(request.deletes, pending);
    });
    pending.then(
      (reply) => {
        if (settled) return;
        let status: NodeStatus;
        try {
          status = request.interpret(reply);
        } catch (error) {
          finish('error', undefined, asError(error));
          return;
        }
        finish(status, reply, undefined);
      },
      (error: unknown) => finish('error', undefined, asError(error)),
    );
  }

  /**
   * A write of a value whose delete timed out here is not sent while that
   * delete may still run: on another connection (a synced write's) or behind
   * a slow queue, the delete could run after the write and remove keys the
   * write's attempt counts as held. Holding the write back until the delete
   * settles would not do: the attempt's own undo, sent meanwhile, would then
   * run before it. The node counts as timed out for that attempt.
   */
  #refuseBehindLateDelete<T, O extends NodeOutcome>(request: NodeRequest<T, O>, deadline: RequestDeadline, deliver: (outcome: O) => void): void {
    queueMicrotask(() =>
      deliver(request.describe(this.name, 'timeout', this.clock.now() - deadline.sentAt, undefined, new NodeTimeoutError(this.name, deadline.timeoutMs))),
    );
  }

  /**
   * A write given up on may still run: the lock's release is sent again after
   * it (LateWrites). A script write that meets NOSCRIPT after that is resent
   * behind the release or undo, and may never answer: they go again as soon
   * as it is resent.
   */
  #trackLate(request: NodeRequest<unknown, NodeOutcome>, pending: Promise<unknown>): void {
    const values = writtenValues(request);
    if (values.length === 0) return;
    for (const value of values) this.#lateWrites.track(value, pending);
    this.#stopResendWatch ??= this.backend.onScriptResend?.(() => this.#lateWrites.resent());
  }
}

function writtenValues(request: NodeRequest<unknown, NodeOutcome>): readonly string[] {
  const writes = request.writes;
  return writes === undefined ? [] : typeof writes === 'string' ? [writes] : writes;
}

/** Gives up on a connecting node at the call's deadline or signal; returns what stops the wait. */
function waitForConnection(
  wait: ConnectWait,
  clock: Clock,
  node: string,
  giveUp: (status: NodeStatus, error: Error) => void,
): () => void {
  const { signal } = wait;
  const onAbort = (): void => giveUp('error', new AbortedError(signal?.reason));
  const delayMs = wait.until - clock.now();
  let timer: NodeJS.Timeout | undefined;
  if (delayMs <= 0) {
    queueMicrotask(() => giveUp('timeout', stillConnecting(node)));
  } else if (Number.isFinite(delayMs)) {
    timer = setTimeout(() => giveUp('timeout', stillConnecting(node)), delayMs);
  }
  let forget: (() => void) | undefined;
  if (signal?.aborted) queueMicrotask(onAbort);
  else if (signal) forget = whenAborted(signal, onAbort);
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    forget?.();
  };
}

function stillConnecting(node: string): NodeConnectionError {
  return new NodeConnectionError(node, new Error('still connecting when the acquire timed out'));
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
