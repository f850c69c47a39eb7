import pRetry from 'p-retry';
import type { Clock } from '../clock/Clock.js';
import { fullJitterDelay } from '../shared/backoff.js';
import { AbortedError, ErrorCode, isQuorumLockError } from '../shared/errors.js';
import type { ResolvedAcquire } from './options.js';
import { sleep } from '../shared/sleep.js';

const RETRYABLE: ReadonlySet<string> = new Set([
  ErrorCode.LOCK_HELD,
  ErrorCode.QUORUM_UNREACHABLE,
  ErrorCode.VALIDITY_EXHAUSTED,
]);

export function isRetryable(error: unknown): boolean {
  return isQuorumLockError(error) && RETRYABLE.has(error.code);
}

/**
 * How to wait before the next attempt: `delayMs` is the backoff drawn for it,
 * already cut to the time left; `error` is why the last attempt failed. The
 * default sleeps; waiters woken by release announcements may return sooner.
 */
export interface PauseBeforeRetry {
  pause(delayMs: number, attemptNumber: number, error: unknown): Promise<void>;
}

/**
 * After a first attempt failed with `firstError`: runs `attempt` until it
 * succeeds, fails with a non-retryable error, runs out of retries, or passes
 * `deadline` (on `clock`); then rejects with the last attempt's error, so
 * callers still tell contention from outage by its code.
 *
 * The caller makes the first attempt itself: most acquires succeed at once
 * and need no retry machinery (nor one more promise between the reply and
 * the lock). After that p-retry owns the loop and the retry count; the
 * deadline is read on our monotonic clock (an injected fake one in tests).
 * The wait between attempts is ours (p-retry's own delay is 0): p-retry's
 * `randomize` spreads waits only between 1x and 2x, not over the whole
 * window, and its signal handling would drop a lock acquired just as the
 * signal fired instead of releasing it.
 */
export async function retryAcquire<T>(
  firstError: unknown,
  attempt: () => Promise<T>,
  policy: ResolvedAcquire,
  clock: Clock,
  deadline: number,
  waiter: PauseBeforeRetry | undefined,
): Promise<T> {
  const { signal, retry } = policy;
  const waitBeforeAttempt = async (error: unknown, attemptsMade: number): Promise<boolean> => {
    if (!isRetryable(error)) return false;
    const remaining = deadline - clock.now();
    if (remaining <= 0) return false;
    const delayMs = Math.min(fullJitterDelay(attemptsMade, retry), remaining);
    await (waiter ? waiter.pause(delayMs, attemptsMade, error) : sleep(delayMs, signal));
    if (signal?.aborted) throw new AbortedError(signal.reason);
    return true;
  };

  if (retry.retries === 0 || !(await waitBeforeAttempt(firstError, 1))) throw firstError;
  return pRetry(
    () => {
      if (signal?.aborted) throw new AbortedError(signal.reason);
      return attempt();
    },
    {
      retries: retry.retries - 1,
      minTimeout: 0,
      maxTimeout: 0,
      shouldRetry: ({ error, attemptNumber }) => waitBeforeAttempt(error, attemptNumber + 1),
    },
  );
}
