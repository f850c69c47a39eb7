/** @sesamecare-oss/redlock, the maintained fork of node-redlock, at its defaults and with a short retry delay. */
import { ExecutionError, Redlock } from '@sesamecare-oss/redlock';
import type { Contender } from './types.js';
import { NODE_REDLOCK_BEST } from './nodeRedlock.js';
import { redlockStyleLocker, type RedlockStyleSettings } from './redlockStyle.js';

/** The fork retries like node-redlock, so it gets node-redlock's best settings. */
export const SESAME_REDLOCK_BEST = NODE_REDLOCK_BEST;

function sesameRedlock(variant: Contender['variant'], settings: RedlockStyleSettings, described: string): Contender {
  return {
    library: 'sesame-redlock',
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

export const sesameRedlockDefaults = sesameRedlock('defaults', {}, 'defaults: retryCount 10, retryDelay 200 ± 100 ms');
export const sesameRedlockBest = sesameRedlock(
  'best',
  SESAME_REDLOCK_BEST,
  `retryCount ${SESAME_REDLOCK_BEST.retryCount}, retryDelay ${SESAME_REDLOCK_BEST.retryDelay} ± ${SESAME_REDLOCK_BEST.retryJitter} ms`,
);
