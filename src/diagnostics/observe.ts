import type { Clock } from '../clock/Clock.js';
import { type ErrorCode, isQuorumLockError } from '../lock/errors.js';
import type { Grant } from '../lock/grant.js';
import type { NodeOutcome } from '../node/outcome.js';
import { publish } from './channels.js';

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
  fields: { readonly resources: readonly string[]; readonly ttlMs: number; readonly attempt?: number },
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
          ...(token === undefined ? {} : { fencingToken: token }),
          nodes: grant.outcomes,
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
        nodes: outcomesOf(error),
      }));
      throw error;
    },
  );
}

function codeOf(error: unknown): ErrorCode | undefined {
  return isQuorumLockError(error) ? error.code : undefined;
}

function outcomesOf(error: unknown): readonly NodeOutcome[] {
  const outcomes = (error as { outcomes?: unknown } | null)?.outcomes;
  return Array.isArray(outcomes) ? (outcomes as NodeOutcome[]) : [];
}
