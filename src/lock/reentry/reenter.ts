import { renewalReserveMs } from '../../clock/renewalReserve.js';
import { type DriftSettings, driftFor } from '../../clock/validity.js';
import { AbortedError } from '../../shared/errors.js';
import type { LockOperations } from '../LockOperations.js';
import type { Lock } from '../Lock.js';
import { heldLockFor } from './HoldContext.js';
import { ReenteredLock } from './ReenteredLock.js';

export interface ReentrySettings extends DriftSettings {
  readonly extendAtFraction: number | undefined;
}

/**
 * What acquire(), tryAcquire() and using() try first: when the caller's
 * context holds `keys` through this locker, one more hold on that lock, at no
 * round trip unless the lock must be extended for `ttlMs`. Undefined when
 * nothing held covers the keys: the call then acquires as usual.
 */
export function reenterHeld(
  ops: LockOperations,
  keys: readonly string[],
  ttlMs: number,
  signal: AbortSignal | undefined,
  settings: ReentrySettings,
): Lock | Promise<Lock> | undefined {
  const held = heldLockFor(ops.owner, keys);
  if (held === undefined) return undefined;
  if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason));
  if (!needsLongerLease(held, ttlMs, settings)) return new ReenteredLock(ops, held);
  // The keys never get a shorter TTL than they have: another hold may count on it.
  return held.extend(Math.max(ttlMs, held.ttlMs)).then(() => new ReenteredLock(ops, held));
}

/**
 * A re-entry asks for `ttlMs`. The held lock falls short when its keys were
 * given a shorter TTL, or when less validity is left than auto-extension
 * lets a lock of `ttlMs` run down to before extending it. An equal TTL
 * asked for while the lock is fresh, or kept extended by using(), costs
 * nothing.
 */
function needsLongerLease(lock: Lock, ttlMs: number, settings: ReentrySettings): boolean {
  if (ttlMs > lock.ttlMs) return true;
  return lock.remainingMs() < renewalReserveMs(ttlMs - driftFor(ttlMs, settings), settings.extendAtFraction);
}
