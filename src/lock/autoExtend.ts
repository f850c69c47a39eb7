import { renewalReserveMs } from '../clock/renewalReserve.js';
import { ErrorCode, isQuorumLockError, LockExpiredError } from '../shared/errors.js';
import type { Lock, RenewalDone } from './Lock.js';
import { type SharedTimer, TimedTask } from './SharedTimer.js';

export interface AutoExtension {
  stop(): void;
}

/**
 * How much of the wait before a renewal it may be sent early, with renewals
 * of other locks that fall due then: locks renewed together get the same
 * validity and fall due together again, so after a few periods a process's
 * locks of one TTL go out in a few batches. A quarter of the wait: a 10 s
 * lock due with 3 s left (renewalReserveMs) may go with up to ~4.7 s left.
 * Once the batches have formed, a batch goes when its locks are due: early
 * renewals are the first periods' cost, not the steady state's.
 */
const EARLY_FRACTION = 0.25;

/**
 * Keeps `lock` alive while a using() routine runs: renews it by its own TTL
 * (`lock.ttlMs`, which a re-entry may have raised) once its validity is down
 * to the reserve kept for retries (renewalReserveMs: `extendAtFraction`, or
 * by default an amount of time), on the process's shared timer and together with
 * the other renewals due then (Lock.renew); after a failure that does not
 * mean the lock is gone (nodes unreachable, validity used up) it tries again
 * within what is left. The lock's signal aborts when it is lost or expires.
 * Nothing here rejects or throws into the event loop.
 *
 * Any holder that must be renewed can do the same: a TimedTask on the
 * shared timer, and a renew that joins its locker's batch.
 */
export function startAutoExtension(lock: Lock, extendAtFraction: number | undefined, timer: SharedTimer): AutoExtension {
  let stopped = false;

  const scheduleRenewal = (): void => {
    const remaining = lock.remainingMs();
    const waitMs = remaining - renewalReserveMs(remaining, extendAtFraction);
    // On the lock's end, not the clock again: one clock read per renewal here.
    timer.schedule(task, lock.validUntil - (remaining - waitMs), waitMs * EARLY_FRACTION);
  };
  // One answer for every renewal of this lock: nothing is allocated per renewal here.
  const answer: RenewalDone = {
    renewed(): void {
      if (!stopped) scheduleRenewal();
    },
    failed(error: unknown): void {
      if (stopped) return;
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
      timer.scheduleIn(task, Math.max(1, remaining / 4));
    },
  };
  const task = new TimedTask(() => {
    if (stopped) return;
    // Past its end when this came due (a stalled process): the lock's own
    // expiry task is not on the timer to say so (Lock.watchEndThroughRenewals),
    // so it ends here; an end already reached stays as it is.
    if (lock.ended) lock.markLost(new LockExpiredError(lock.resources));
    else lock.renewThen(lock.ttlMs, answer);
  });

  // The routine learns of an expiry even if every extension fails: from the
  // renewals, whose deadlines end with the validity, and from a renewal
  // retried past the end (failed() below), not from an expiry task per lock.
  lock.watchEndThroughRenewals(true);
  void lock.signal;
  scheduleRenewal();

  return {
    stop(): void {
      stopped = true;
      timer.cancel(task);
      lock.watchEndThroughRenewals(false);
    },
  };
}
