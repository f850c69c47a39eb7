import { channel } from 'node:diagnostics_channel';
import type { ErrorCode } from '../shared/errors.js';
import type { NodeStatus } from '../shared/outcome.js';

/**
 * node:diagnostics_channel events, so any metrics or tracing library can
 * subscribe without quorumlock depending on it. Payloads never carry a lock's
 * value (it is the secret that proves ownership), and every payload survives
 * JSON.stringify as it is: events are shipped to logs and tracing backends.
 */
export const channels = Object.freeze({
  acquire: channel('quorumlock:acquire'),
  extend: channel('quorumlock:extend'),
  release: channel('quorumlock:release'),
  releaseSettled: channel('quorumlock:release-settled'),
  lost: channel('quorumlock:lost'),
});

/**
 * An error as events carry it. Error objects serialize to `{}` and some carry
 * the command they failed with (ioredis sets `error.command.args`, which holds
 * the lock's value), so events get these fields only.
 */
export interface EventError {
  /** The error's class name: `NodeTimeoutError`, `ReplyError`, `Error`. */
  readonly name: string;
  readonly message: string;
  /** The error's `code` when it is a string: `QUORUMLOCK_NODE_TIMEOUT`, `ECONNREFUSED`. */
  readonly code?: string;
}

/** One node's answer, as events carry it. */
export interface EventNodeOutcome {
  /** The node's label: `host:port`, or the `name` given for it. */
  readonly node: string;
  /** On `quorumlock:release` and `quorumlock:release-settled`, `ok` means our keys were deleted there. */
  readonly status: NodeStatus;
  /** Milliseconds from sending the request to its outcome, on the locker's clock. */
  readonly ms: number;
  /** Present for `error` and `timeout`. */
  readonly error?: EventError;
}

/** One acquire attempt (acquire() may make several; tryAcquire() makes one). */
export interface AcquireEvent {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  /** 1 for the first attempt of a call. */
  readonly attempt: number;
  readonly granted: boolean;
  /** Why the attempt failed: LOCK_HELD, QUORUM_UNREACHABLE, VALIDITY_EXHAUSTED. */
  readonly errorCode?: ErrorCode;
  /** Milliseconds the attempt took, on the locker's clock. */
  readonly durationMs: number;
  /** Validity left when the lock was handed over. */
  readonly validityMs?: number;
  /** With fencing: `lock.fencingToken` in decimal (a bigint has no JSON form; `BigInt(fencingToken)` gives it back). */
  readonly fencingToken?: string;
  /** Per-node outcomes known when the attempt was decided. */
  readonly nodes: readonly EventNodeOutcome[];
  /** Present (true) when a holder of this process passed the lock on: no node was asked (`nodes` is empty). */
  readonly passed?: true;
  /**
   * Present (true) when a quorum of nodes handed the lock to this waiter at a
   * release: no request went out for it (`nodes` are the nodes that handed
   * it over), and `validityMs` is the reservation's. Its claim of the full
   * TTL follows on the extend channel, with `claim: true`.
   */
  readonly handedOff?: true;
}

export interface ExtendEvent {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  readonly granted: boolean;
  readonly errorCode?: ErrorCode;
  readonly durationMs: number;
  readonly validityMs?: number;
  readonly nodes: readonly EventNodeOutcome[];
  /** Present (true) for a handed-off lock's claim of its full TTL (see AcquireEvent.handedOff). */
  readonly claim?: true;
}

/** A release, published when it is decided: before `release()` resolves. */
export interface ReleaseEvent {
  readonly resources: readonly string[];
  /** Nodes on which our keys were deleted, of those that had answered (as `release()` reports it). */
  readonly released: number;
  readonly durationMs: number;
  /** Per-node outcomes known when the release was decided. */
  readonly nodes: readonly EventNodeOutcome[];
  /** Present (true) when the lock was passed to the next waiter of this process (see ReleaseResult.passedOn). */
  readonly passedOn?: true;
}

/** The same release once every node has answered or timed out (`release()`'s `settled`). */
export interface ReleaseSettledEvent extends ReleaseEvent {
  /** Nodes on which our keys were deleted, of all nodes. */
  readonly released: number;
  /** Milliseconds until the last node's outcome. */
  readonly durationMs: number;
  /** Every node's outcome. */
  readonly nodes: readonly EventNodeOutcome[];
}

export interface LostEvent {
  readonly resources: readonly string[];
  /** LOCK_LOST (a quorum no longer holds it) or LOCK_EXPIRED (its validity ran out). */
  readonly errorCode: ErrorCode;
}

export type ChannelName = keyof typeof channels;

/** Builds the payload only when someone listens. */
export function publish<E extends object>(name: ChannelName, build: () => E): void {
  const target = channels[name];
  if (target.hasSubscribers) target.publish(build());
}
