/** The backoff settings of a retry policy (the locker's `retry` option, resolved). */
export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly factor: number;
}

/**
 * "Full jitter" backoff: a uniformly random whole number of milliseconds from
 * 0 to min(maxDelayMs, baseDelayMs * factor^(attempt - 1)), both included.
 * Spreading waiters over the whole window keeps them from retrying in
 * lockstep after a release. (Rounded down from below the cap, a 1 ms cap
 * gave 0 every time: no wait at all between attempts.)
 */
export function fullJitterDelay(attempt: number, retry: BackoffPolicy, random: () => number = Math.random): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * retry.factor ** Math.max(0, attempt - 1));
  return Math.min(cap, Math.floor(random() * (cap + 1)));
}
