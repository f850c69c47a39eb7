/** node-redlock 5.0.0-beta.2 (`redlock` on npm), at its defaults and with a short retry delay. */
import Redlock, { ExecutionError } from 'redlock';
import type { Contender } from './types.js';
import { retryEvery, redlockStyleLocker, type RedlockStyleSettings } from './redlockStyle.js';

/**
 * Most critical sections per second without give-ups in a sweep of
 * retryDelay 5, 10, 20, 50, 100 ms (jitter half of it, a 10 s window like the
 * other libraries' acquire timeout) on 1 and 5 nodes; see bench/README.md.
 */
export const NODE_REDLOCK_BEST = retryEvery(100, 10_000);

function nodeRedlock(variant: Contender['variant'], settings: RedlockStyleSettings, described: string): Contender {
  return {
    library: 'node-redlock',
    variant,
    role: 'peer',
    settings: described,
    differsIn: variant === 'best' ? ['contended'] : undefined,
    className: () => 'Redlock',
    create: (clients) =>
      redlockStyleLocker(
        (list) => new Redlock(list, settings),
        clients,
        (error) => error instanceof ExecutionError,
      ),
  };
}

export const nodeRedlockDefaults = nodeRedlock('defaults', {}, 'defaults: retryCount 10, retryDelay 200 ± 100 ms');
export const nodeRedlockBest = nodeRedlock(
  'best',
  NODE_REDLOCK_BEST,
  `retryCount ${NODE_REDLOCK_BEST.retryCount}, retryDelay ${NODE_REDLOCK_BEST.retryDelay} ± ${NODE_REDLOCK_BEST.retryJitter} ms`,
);
