/**
 * The one time base of a chaos history: milliseconds since the Unix epoch, as
 * `performance.timeOrigin + performance.now()`.
 *
 * Within one process this is performance.now() plus a constant, so it is as
 * monotonic as the library's own clock (monotonicClock = performance.now()),
 * and a lock's `validUntil` converts exactly with fromMonotonic().
 *
 * Across processes (child workers) it relies on one assumption: every process
 * derives `performance.timeOrigin` from the same system wall clock when it
 * starts, and that clock is not stepped, nor slewed by more than a fraction of
 * a millisecond, between the parent's and the children's starts. Overriding
 * Date.now() in a worker (the wall-clock-jump fault) does not touch it:
 * timeOrigin is read once by Node at start-up. The child-process scenario
 * measures how far the bases disagree with a ping handshake
 * (run/childWorkers.ts) and refuses to judge a history when they disagree by
 * more than a few milliseconds.
 */
import { performance } from 'node:perf_hooks';

/** Now, on the shared time base. */
export function sharedNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A performance.now() reading of this process (e.g. `lock.validUntil`) on the shared time base. */
export function fromMonotonic(monotonicMs: number): number {
  return performance.timeOrigin + monotonicMs;
}
