import type { Clock } from '../../clock/Clock.js';
import { type AutoExtension, startAutoExtension } from '../autoExtend.js';
import { sharedTimerFor } from '../SharedTimer.js';
import type { Lock } from '../Lock.js';
import type { LockedRoutine } from '../Locker.js';
import { ReenteredLock } from './ReenteredLock.js';

export interface HoldSettings {
  readonly extendAtFraction: number | undefined;
  readonly reentrant: boolean;
  /** The locker's clock: its locks' renewals run on the shared timer of that clock. */
  readonly clock: Clock;
}

interface SharedExtension {
  users: number;
  readonly extension: AutoExtension;
}

/** Keyed by the lock as acquired: its re-entries share its one auto-extension. */
const extensions = new WeakMap<Lock, SharedExtension>();

/**
 * The body of using(): runs `routine` with `lock` extended in the background
 * and, on a reentrant locker, in a context whose nested calls re-enter it;
 * then releases `lock` (for a re-entry: gives back its hold). Resolves or
 * rejects as the routine does: release() never rejects.
 */
export async function holdWhile<T>(lock: Lock, routine: LockedRoutine<T>, settings: HoldSettings): Promise<T> {
  const stopExtending = keepExtended(lock, settings);
  try {
    return await (settings.reentrant ? lock.scope(routine) : routine(lock.signal, lock));
  } finally {
    stopExtending();
    await lock.release();
  }
}

/**
 * Stops the auto-extension of `lock`, whose locker's close() released it,
 * while its routine may still run: the routine's own end then has nothing
 * left to stop.
 */
export function stopExtending(lock: Lock): void {
  const share = extensions.get(lock);
  if (!share) return;
  extensions.delete(lock);
  share.extension.stop();
}

/**
 * Keeps the lock extended until the returned function is called. Holds on
 * one lock share one auto-extension, which runs while any of them does: two
 * would double the round trips, and the outer hold may be a plain acquire()
 * that extends nothing.
 */
function keepExtended(lock: Lock, settings: HoldSettings): () => void {
  const shared = lock instanceof ReenteredLock ? lock.enclosing : lock;
  let share = extensions.get(shared);
  if (share) {
    share.users++;
  } else {
    share = { users: 1, extension: startAutoExtension(shared, settings.extendAtFraction, sharedTimerFor(settings.clock)) };
    extensions.set(shared, share);
  }
  const mine = share;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--mine.users > 0) return;
    mine.extension.stop();
    if (extensions.get(shared) === mine) extensions.delete(shared);
  };
}
