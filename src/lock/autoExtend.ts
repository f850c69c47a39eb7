import { ErrorCode, isQuorumLockError, LockExpiredError } from '../shared/errors.js';
import type { Lock } from './Lock.js';

export interface AutoExtension {
  stop(): void;
}

/**
 * Keeps `lock` alive while a using() routine runs: extends it by its own TTL
 * (`lock.ttlMs`, which a re-entry may have raised) once `extendAtFraction` of
 * its validity has passed, and after a failure that does
 * not mean the lock is gone (nodes unreachable, validity used up) tries again
 * within what is left. The lock's signal aborts when it is lost or expires.
 * Nothing here rejects or throws into the event loop.
 */
export function startAutoExtension(lock: Lock, extendAtFraction: number): AutoExtension {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(run, Math.max(0, Math.floor(delayMs)));
    timer.unref();
  };

  const run = (): void => {
    if (stopped || lock.ended) return;
    lock.extend(lock.ttlMs).then(
      () => schedule(lock.remainingMs() * extendAtFraction),
      (error: unknown) => {
        if (stopped || lock.ended) return;
        if (isQuorumLockError(error) && (error.code === ErrorCode.LOCK_LOST || error.code === ErrorCode.LOCK_EXPIRED)) {
          return;
        }
        const remaining = lock.remainingMs();
        if (remaining <= 0) {
          lock.markLost(new LockExpiredError(lock.resources));
          return;
        }
        // Each retry takes a quarter of what is left, so several fit before
        // expiry, but at least a millisecond: no burst of requests at the end.
        schedule(Math.max(1, remaining / 4));
      },
    );
  };

  // Reading the signal here arms the lock's expiry timer, so the routine
  // learns of an expiry even if every extension fails.
  void lock.signal;
  schedule(lock.remainingMs() * extendAtFraction);

  return {
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

