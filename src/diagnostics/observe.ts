import type { Clock } from '../clock/Clock.js';
import { type ErrorCode, isQuorumLockError } from '../shared/errors.js';
import type { Grant, ReleaseResult } from '../shared/grant.js';
import type { NodeOutcome } from '../shared/outcome.js';
import {
  channels,
  type EventError,
  type EventNodeOutcome,
  publish,
  type ReleaseEvent,
  type ReleaseSettledEvent,
} from './channels.js';

/**
 * Runs one acquire attempt or extend and publishes its outcome on the
 * channel: `fields` plus whether it was granted, how long it took, the
 * validity left or the error's code, and the per-node outcomes. Callers
 * check the channel for subscribers first, so that nobody listening costs
 * neither the fields nor the closure.
 */
export function observeGrant(
  channel: 'acquire' | 'extend',
  clock: Clock,
  fields: {
    readonly resources: readonly string[];
    readonly ttlMs: number;
    readonly attempt?: number;
    readonly handedOff?: true;
    readonly claim?: true;
  },
  run: () => Promise<Grant>,
): Promise<Grant> {
  const startedAt = clock.now();
  return run().then(
    (grant) => {
      publish(channel, () => {
        const now = clock.now();
        const token = grant.fencingTokens?.[0];
        return {
          ...fields,
          granted: true,
          durationMs: now - startedAt,
          validityMs: grant.validUntil - now,
          ...(token === undefined ? {} : { fencingToken: token.toString() }),
          nodes: eventNodes(grant.outcomes),
        };
      });
      return grant;
    },
    (error: unknown) => {
      publish(channel, () => ({
        ...fields,
        granted: false,
        errorCode: codeOf(error),
        durationMs: clock.now() - startedAt,
        nodes: eventNodes(outcomesOf(error)),
      }));
      throw error;
    },
  );
}

/**
 * Runs a release and publishes it on `quorumlock:release` as soon as it is
 * decided, before the caller's `await release()` resumes, so that counters
 * read right after a release include it. Every node's outcome follows on
 * `quorumlock:release-settled`; `settled` is only asked for when that
 * channel has subscribers, since building it costs promises on every release.
 */
export function observeRelease(clock: Clock, resources: readonly string[], run: () => Promise<ReleaseResult>): Promise<ReleaseResult> {
  const startedAt = clock.now();
  return run().then((result) => {
    publish<ReleaseEvent>('release', () => ({
      resources,
      released: result.released,
      durationMs: clock.now() - startedAt,
      nodes: eventNodes(result.outcomes),
    }));
    if (channels.releaseSettled.hasSubscribers) {
      void result.settled.then((all) =>
        publish<ReleaseSettledEvent>('releaseSettled', () => ({
          resources,
          released: all.released,
          durationMs: clock.now() - startedAt,
          nodes: eventNodes(all.outcomes),
        })),
      );
    }
    return result;
  });
}

/**
 * Per-node outcomes without what JSON cannot carry or must not see: fencing
 * tokens (bigints), per-node key counts (`released` counts nodes in events),
 * and Error objects (see EventError).
 */
function eventNodes(outcomes: readonly NodeOutcome[]): EventNodeOutcome[] {
  return outcomes.map(({ node, status, ms, error }) => (error ? { node, status, ms, error: eventError(error) } : { node, status, ms }));
}

function eventError(error: Error): EventError {
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === 'string' ? { name: error.name, message: error.message, code } : { name: error.name, message: error.message };
}

function codeOf(error: unknown): ErrorCode | undefined {
  return isQuorumLockError(error) ? error.code : undefined;
}

function outcomesOf(error: unknown): readonly NodeOutcome[] {
  const outcomes = (error as { outcomes?: unknown } | null)?.outcomes;
  return Array.isArray(outcomes) ? (outcomes as NodeOutcome[]) : [];
}
