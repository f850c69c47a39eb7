import { performance } from 'node:perf_hooks';

/**
 * A source of monotonic milliseconds. Every elapsed time in quorumlock is read
 * from a Clock, never from Date.now(), which jumps with NTP and manual changes.
 */
export interface Clock {
  /** Milliseconds since some fixed origin; never decreases. */
  now(): number;
}

export const monotonicClock: Clock = Object.freeze({
  now: () => performance.now(),
});
