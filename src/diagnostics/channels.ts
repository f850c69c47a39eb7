import { channel } from 'node:diagnostics_channel';
import type { ErrorCode } from '../lock/errors.js';
import type { NodeOutcome } from '../node/outcome.js';

/**
 * node:diagnostics_channel events, so any metrics or tracing library can
 * subscribe without quorumlock depending on it. Payloads never carry a lock's
 * value (it is the secret that proves ownership).
 */
export const channels = Object.freeze({
  acquire: channel('quorumlock:acquire'),
  extend: channel('quorumlock:extend'),
  release: channel('quorumlock:release'),
  lost: channel('quorumlock:lost'),
});

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
  readonly fencingToken?: bigint;
  /** Per-node outcomes known when the attempt was decided. */
  readonly nodes: readonly NodeOutcome[];
}

export interface ExtendEvent {
  readonly resources: readonly string[];
  readonly ttlMs: number;
  readonly granted: boolean;
  readonly errorCode?: ErrorCode;
  readonly durationMs: number;
  readonly validityMs?: number;
  readonly nodes: readonly NodeOutcome[];
}

export interface ReleaseEvent {
  readonly resources: readonly string[];
  /** Nodes on which our keys were still there and were deleted. */
  readonly released: number;
  readonly durationMs: number;
  readonly nodes: readonly NodeOutcome[];
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
