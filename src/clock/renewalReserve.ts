/**
 * How much validity auto-extension keeps in hand when it renews a lock: the
 * time its retries have if the renewal fails (a node paused or restarting,
 * the process itself stalled). Pure function, milliseconds.
 *
 * With an `extendAtFraction` the user chose: the rest of the validity,
 * `validity × (1 − extendAtFraction)`, as the option says.
 *
 * Without one, the reserve is an amount of time, not a share: what it must
 * outlast (a node's pause, a failover, a stall of a loaded machine) lasts
 * the same whatever the TTL. Half the validity while that is at most
 * RESERVE_MS (a lock of up to ~6 s is renewed as at 0.5, as before); then
 * RESERVE_MS; and never less than a fifth of the validity (a lock of 15 s or
 * more is renewed at 0.8 of it, as redis-semaphore does). A 10 s lock is
 * renewed with ~3 s left, not ~5 s: about 1.4× fewer renewals, and a pause
 * of 2 s is still survived (see README, Holding many locks).
 */
export const RESERVE_MS = 3_000;
const LONG_LOCK_RESERVE_SHARE = 0.2;

export function renewalReserveMs(validityMs: number, extendAtFraction: number | undefined): number {
  if (validityMs <= 0) return 0;
  if (extendAtFraction !== undefined) return validityMs * (1 - extendAtFraction);
  return Math.min(validityMs / 2, Math.max(RESERVE_MS, validityMs * LONG_LOCK_RESERVE_SHARE));
}
