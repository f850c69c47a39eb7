import { channel } from 'node:diagnostics_channel';
import type { ErrorCode } from '../shared/errors.js';
import type { NodeStatus } from '../shared/outcome.js';

/**
 * node:diagnostics_channel events, so any metrics or tracing library can
 * subscribe without quorumlock depending on it. Payloads never carry a lock's
 * value (it is the secret that proves ownership), and every payload survives
 * JSON.stringify as it is: events are shipped to logs and tracing backends.
 *
 * Exported as `diagnosticsChannels`. Subscribe with
 * `diagnosticsChannels.acquire.subscribe((event) => …)`, or by name with
 * `diagnostics_channel.subscribe('quorumlock:acquire', listener)`. Events are
 * built only while a channel has subscribers: unobserved, they cost nothing.
 *
 * - `acquire`, `quorumlock:acquire`: an {@link AcquireEvent} per acquire attempt;
 * - `extend`, `quorumlock:extend`: an {@link ExtendEvent} per extend (`lock.extend()` or using()'s auto-extension);
 * - `release`, `quorumlock:release`: a {@link ReleaseEvent} per release, when it is decided;
 * - `releaseSettled`, `quorumlock:release-settled`: a {@link ReleaseSettledEvent} per release, once every node answered;
 * - `lost`, `quorumlock:lost`: a {@link LostEvent} when a held lock is lost or expires unreleased.
 */
export const channels = Object.freeze({
  /** `quorumlock:acquire`: one {@link AcquireEvent} per acquire attempt. */
  acquire: channel('quorumlock:acquire'),
  /** `quorumlock:extend`: one {@link ExtendEvent} per extend, by `lock.extend()` or by using()'s auto-extension. */
  extend: channel('quorumlock:extend'),
  /** `quorumlock:release`: one {@link ReleaseEvent} per release, when it is decided. */
  release: channel('quorumlock:release'),
  /** `quorumlock:release-settled`: one {@link ReleaseSettledEvent} per release, once every node answered. */
  releaseSettled: channel('quorumlock:release-settled'),
  /** `quorumlock:lost`: one {@link LostEvent} when a held lock is lost or expires unreleased. */
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
  /** The error's message. */
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
  /** The resources asked for. */
  readonly resources: readonly string[];
  /** The TTL asked for, in milliseconds. */
  readonly ttlMs: number;
  /** 1 for the first attempt of a call. */
  readonly attempt: number;
  /** Whether this attempt took the lock. */
  readonly granted: boolean;
  /** Why the attempt failed: LOCK_HELD, QUORUM_UNREACHABLE, VALIDITY_EXHAUSTED. */
  readonly errorCode?: ErrorCode;
  /** Milliseconds the attempt took, on the locker's clock. */
  readonly durationMs: number;
  /** Validity left when the lock was handed over, in milliseconds; present when granted. */
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

/** One extend of a held lock: by `lock.extend()`, or by using()'s auto-extension. */
export interface ExtendEvent {
  /** The lock's resources. */
  readonly resources: readonly string[];
  /** The TTL the keys were to be given, in milliseconds. */
  readonly ttlMs: number;
  /** Whether a quorum took the new TTL with validity left. */
  readonly granted: boolean;
  /** Why the extend failed: LOCK_LOST, QUORUM_UNREACHABLE, VALIDITY_EXHAUSTED. */
  readonly errorCode?: ErrorCode;
  /** Milliseconds the extend took, on the locker's clock. */
  readonly durationMs: number;
  /** Validity left after the extend, in milliseconds; present when granted. */
  readonly validityMs?: number;
  /** Per-node outcomes known when the extend was decided. */
  readonly nodes: readonly EventNodeOutcome[];
  /** Present (true) for a handed-off lock's claim of its full TTL (see AcquireEvent.handedOff). */
  readonly claim?: true;
}

/** A release, published when it is decided: before `release()` resolves. */
export interface ReleaseEvent {
  /** The lock's resources. */
  readonly resources: readonly string[];
  /** Nodes on which our keys were deleted, of those that had answered (as `release()` reports it). */
  readonly released: number;
  /** Milliseconds until the release was decided, on the locker's clock. */
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

/**
 * A held lock ended without a release: a quorum no longer holds it (an extend
 * or auto-extension found it gone), or its validity ran out. Its `signal`
 * aborts with the same error.
 */
export interface LostEvent {
  /** The lock's resources. */
  readonly resources: readonly string[];
  /** LOCK_LOST (a quorum no longer holds it) or LOCK_EXPIRED (its validity ran out). */
  readonly errorCode: ErrorCode;
}

/** The key of each channel in `diagnosticsChannels`: `'acquire'`, `'extend'`, `'release'`, `'releaseSettled'`, `'lost'`. */
export type ChannelName = keyof typeof channels;

/** Builds the payload only when someone listens. */
export function publish<E extends object>(name: ChannelName, build: () => E): void {
  const target = channels[name];
  if (target.hasSubscribers) target.publish(build());
}
