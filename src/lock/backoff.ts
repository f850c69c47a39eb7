import type { ResolvedRetry } from './options.js';

/**
 * "Full jitter" backoff: a uniformly random wait between 0 and
 * min(maxDelayMs, baseDelayMs * factor^(attempt - 1)). Spreading waiters over
 * the whole window keeps them from retrying in lockstep after a release.
 */
export function fullJitterDelay(attempt: number, retry: ResolvedRetry, random: () => number = Math.random): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * retry.factor ** Math.max(0, attempt - 1));
  return Math.floor(random() * cap);
}
