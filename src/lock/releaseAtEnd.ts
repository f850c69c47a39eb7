import type { ReleaseResult, WritesOut } from '../shared/grant.js';
import type { LockOperations } from './LockOperations.js';

/** How often the release of a lock that ended unreleased is tried, and how far apart. */
const TRIES = 5;
const RETRY_MS = 200;

/**
 * The release of a lock that was lost or expired without being released:
 * a write of it given up on may still land (see node/LateWrites.ts), so the
 * release is tried again while some node could not be asked (an error, a
 * timeout: a client reconnecting after a failover, a demoted master that
 * refused it). Resolves with the first try's result, as release() would.
 */
export function releaseAtEnd(
  ops: LockOperations,
  keys: readonly string[],
  value: string,
  contended: boolean,
  writesOut: WritesOut | undefined,
): Promise<ReleaseResult> {
  const first = ops.release(keys, value, contended, writesOut);
  const retry = (result: Promise<ReleaseResult>, tries: number): void => {
    void result
      .then((decided) => decided.settled)
      .then((settled) => {
        if (tries <= 1 || !settled.outcomes.some((outcome) => outcome.status === 'error' || outcome.status === 'timeout')) return;
        setTimeout(() => retry(ops.release(keys, value, contended), tries - 1), RETRY_MS).unref();
      });
  };
  retry(first, TRIES);
  return first;
}
