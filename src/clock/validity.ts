/**
 * Clock-drift and validity math of the Redlock algorithm, as pure functions.
 * All times are milliseconds on one monotonic clock.
 */

export interface DriftSettings {
  /** Fraction of the TTL by which node clocks may disagree with ours. */
  readonly driftFactor: number;
  /** Fixed allowance added to the drift, for timer granularity. */
  readonly driftMs: number;
}

/** drift(ttl) = ceil(ttl * driftFactor) + driftMs */
export function driftFor(ttlMs: number, settings: DriftSettings): number {
  return Math.ceil(ttlMs * settings.driftFactor) + settings.driftMs;
}

/**
 * validity = ttl - (now - start) - drift(ttl), where start was read before the
 * first request of the operation went out. May be zero or negative.
 */
export function validityMs(
  ttlMs: number,
  startedAt: number,
  now: number,
  settings: DriftSettings,
): number {
  return ttlMs - (now - startedAt) - driftFor(ttlMs, settings);
}

/** The monotonic instant at which a lock granted at `startedAt` stops being valid. */
export function validUntil(ttlMs: number, startedAt: number, settings: DriftSettings): number {
  return startedAt + ttlMs - driftFor(ttlMs, settings);
}

/**
 * The share of a fresh acquire's validity that a lock must still have to be
 * passed straight to the next waiter of the same process (which then keeps
 * it as it is): below it, the lock goes back through the nodes, and the
 * waiter gets a TTL counted from its own attempt.
 */
export const PASS_VALIDITY_SHARE = 0.9;

/**
 * Whether a lock with `remainingMs` of validity may be passed to a waiter
 * that asked for `ttlMs`: it keeps at least PASS_VALIDITY_SHARE of what an
 * acquire of its own would have given it at best (ttl - drift(ttl)).
 */
export function validEnoughToPass(remainingMs: number, ttlMs: number, settings: DriftSettings): boolean {
  return remainingMs >= PASS_VALIDITY_SHARE * (ttlMs - driftFor(ttlMs, settings));
}
