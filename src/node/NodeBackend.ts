import type { NodeConnectionError } from '../shared/errors.js';
import type { KeyState, LineEntry, LinePlace, LineReply, LuaScript, RenewalEntry, ScriptRenewal } from '../scripts/index.js';
import type { Announce, Rejoin, UndoneInLine } from '../scripts/release.js';
import type { PubSubPort } from './PubSub.js';

/** Marks a NodeBackend that lockers take as it is, where they take a client (the in-memory node of quorumlock/testing). */
export const IN_MEMORY_NODE: unique symbol = Symbol.for('quorumlock.inMemoryNode');

/** A node that is its own backend: what lockers accept besides the clients of assertClient.ts. */
export interface InMemoryBackend extends NodeBackend {
  readonly [IN_MEMORY_NODE]: true;
}

/** A client's first connection, as requests wait for it (see ConnectionGate). */
export interface FirstConnection {
  /** True once the client is, or has once been, ready: requests then go out as they come. */
  isOpen(): boolean;
  /** Calls exactly one of the two, in the order of registration, once the first connection is made or fails. */
  whenOpen(onReady: () => void, onFailure: (error: NodeConnectionError) => void): void;
}

/** A write's reply, and how many replicas acknowledged the write (Redis WAIT). */
export interface SyncedReply<T> {
  readonly reply: T;
  readonly acknowledged: number;
  /**
   * The client's connection was replaced between sending the write and the
   * WAIT's reply: a WAIT resent on a new connection waits for nothing of
   * ours, so `acknowledged` proves nothing; nor does `reply`, which may be
   * that of the write sent again after its first run stood.
   */
  readonly connectionChanged?: true;
}

/**
 * The lock operations one node performs, with no timeout and no bookkeeping.
 * RedisNodeBackend runs them as Lua scripts on an ioredis client; the property
 * tests run them on a simulated node instead.
 */
export interface NodeBackend {
  readonly name: string;
  /**
   * Requests wait for it before they are sent, so that connecting does not
   * count against the node timeout. Absent: the backend is always ready.
   */
  readonly connection?: FirstConnection;
  /**
   * Calls `listener` right after a script goes out again in full after
   * NOSCRIPT on this backend's connection (see LuaScript's onScriptResend);
   * returns what stops it. Absent: the backend never resends a write.
   */
  onScriptResend?(listener: () => void): () => void;
  /**
   * True when every key now holds `value`; false when any holds another value.
   * A single key that already holds `value` itself counts as held (SET NX).
   */
  acquire(keys: readonly string[], value: string, ttlMs: number): Promise<boolean>;
  /** True when every key still held `value` and got the new TTL. */
  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean>;
  /**
   * Many locks' extends at once, each as extend() would: true or false per
   * entry, in order. Backends without it get one extend() per entry.
   */
  extendMany?(entries: readonly RenewalEntry[]): Promise<boolean[]>;
  /**
   * How many keys still held `value` (marked by a waiter or not) and were
   * deleted; a deleted key with a wait line goes to its head. `announce`
   * tells which other deletions release watchers hear of (default: those a
   * waiter marked).
   */
  release(keys: readonly string[], value: string, announce?: Announce): Promise<number>;
  /**
   * The undo of a failed attempt by a waiter in line: release with `none`
   * that puts the waiter back in its place first, so a freed key may be
   * handed straight back to it. Backends without it undo with a plain
   * release (`none`): the waiter's place then waits for its next attempt.
   */
  undoInLine?(keys: readonly string[], value: string, rejoin: Rejoin): Promise<UndoneInLine>;
  /**
   * Acquire that also hands out each resource's next fencing token; null when
   * any key holds another value. Backends without it cannot serve `fencing: true`.
   */
  acquireFenced?(keys: readonly string[], value: string, ttlMs: number): Promise<bigint[] | null>;
  /**
   * The smallest PTTL of the keys when every one holds `value` (marked by a
   * waiter or not), else 0. Backends without it cannot re-enter a lock by its value.
   */
  verify?(keys: readonly string[], value: string): Promise<number>;
  /** Each resource's state (holder, PTTL, waiters), read without changing anything. Backends without it cannot be inspected. */
  inspect?(resources: readonly string[]): Promise<readonly KeyState[]>;
  /** Raises each resource's token counter to at least `tokens[i]` while `value` holds every key. */
  fence?(keys: readonly string[], value: string, tokens: readonly bigint[]): Promise<boolean>;
  /**
   * An attempt from the wait lines kept on this node (acquire.lua, line
   * mode): granted only to the first live waiter of every resource's line.
   * Backends without it leave waiters to announcements and polling.
   */
  acquireInLine?(keys: readonly string[], value: string, ttlMs: number, fencing: boolean, place: LinePlace): Promise<LineReply>;
  /** Refreshes the leases of these waiters' places; how many still had one. */
  keepalive?(entries: readonly LineEntry[], leaseMs: number): Promise<number>;
  /** Steps out of the lines; one that gave up hands on a reservation it did not take. */
  leave?(keys: readonly string[], value: string, acquired: boolean): Promise<number>;
  /**
   * Sends `write` (on the backend it is given, which may be another
   * connection to the same node), then WAIT for `replicas` right behind it on
   * that connection (WAIT covers the writes its own connection made), and
   * resolves with both replies. Backends without it cannot serve `syncReplicas`.
   */
  synced?<T>(write: (on: NodeBackend) => Promise<T>, replicas: number, timeoutMs: number): Promise<SyncedReply<T>>;
  /**
   * Runs a script of another primitive than the mutex (the semaphore's),
   * whose operations have no method of their own here, and reads its reply.
   * Backends without it serve the mutex only.
   */
  runScript?<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], read: (reply: unknown) => T): Promise<T>;
  /**
   * Many holders' renewals of another primitive than the mutex, in one call
   * per chunk of them: `script` is renewEachScript of that primitive's extend
   * script; true or false per entry, in order. Backends without it run the
   * extend script once per holder (runScript).
   */
  renewEach?(script: LuaScript, entries: readonly ScriptRenewal[]): Promise<boolean[]>;
  /** Publish/subscribe on this node. Backends without it leave waiters to backoff polling. */
  readonly pubSub?: PubSubPort;
  /** Throws InvalidArgumentError when the keys cannot be locked together here. */
  checkKeys?(keys: readonly string[], argument: string, fencing: boolean): void;
}
