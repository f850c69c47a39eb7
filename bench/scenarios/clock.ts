import { performance } from 'node:perf_hooks';

/** Monotonic milliseconds with sub-µs resolution. */
export const now = (): number => performance.now();

/**
 * Milliseconds on a time base shared by processes: every process derives
 * performance.timeOrigin from the one system wall clock when it starts, and
 * counts on from there monotonically, so readings of different processes on
 * one machine compare (bench/procs checks how far they disagree).
 */
export const sharedNow = (): number => performance.timeOrigin + performance.now();

/** libuv's count of event-loop turns so far (Node 20.18+, 22.8+); NaN where Node does not report it. */
export function loopTurns(): number {
  const timing = performance.nodeTiming as { uvMetricsInfo?: { loopCount: number } };
  return timing.uvMetricsInfo?.loopCount ?? Number.NaN;
}
