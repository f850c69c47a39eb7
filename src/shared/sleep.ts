import { whenAborted } from './abortListeners.js';

/**
 * Waits `ms` (with no timer when `ms` is not finite), or less when the signal
 * aborts or the caller ends it: `wake`, when given, is handed the function
 * that ends the wait, and undefined once the wait is over. It resolves either
 * way; the caller checks why. The timer is unref'd and the listener removed
 * (one listener per signal for all of the process's waits: abortListeners.ts).
 *
 * A wait that ends on its own has lasted more than `ms`: Node counts timers
 * in the loop's whole milliseconds, so a timer armed at x.9 ms fires at
 * x + ms, up to a millisecond early by the monotonic clock. A wait bounded
 * by a deadline then ended before it, and a waiter whose backoff came out 0
 * polled Redis until the clock caught up. The timer gets one more
 * millisecond instead of re-reading the clock, which fake timers in users'
 * tests would never move.
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: (end: (() => void) | undefined) => void): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let forget: (() => void) | undefined;
    const done = (): void => {
      clearTimeout(timer);
      forget?.();
      wake?.(undefined);
      resolve();
    };
    const timer = Number.isFinite(ms) ? setTimeout(done, ms + TIMER_GRAIN_MS) : undefined;
    timer?.unref();
    forget = signal ? whenAborted(signal, done) : undefined;
    wake?.(done);
  });
}

/** How early, at most, Node fires a timer by the monotonic clock. */
const TIMER_GRAIN_MS = 1;
