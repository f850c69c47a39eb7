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
