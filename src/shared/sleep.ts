import { performance } from 'node:perf_hooks';

/**
 * Waits `ms` (with no timer when `ms` is not finite), or less when the signal
 * aborts or the caller ends it: `wake`, when given, is handed the function
 * that ends the wait, and undefined once the wait is over. It resolves either
 * way; the caller checks why. The timer is unref'd and the listener removed.
 *
 * A wait that ends on its own has lasted at least `ms`. Node measures a
 * timer from the event loop's cached time, read when the loop's turn began:
 * armed late in a long turn (a busy or descheduled process), a timer fires
 * that much early. A wait bounded by a deadline then ended before it, and a
 * waiter whose backoff was 0 polled Redis until the clock caught up.
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: (end: (() => void) | undefined) => void): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const until = performance.now() + ms;
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      wake?.(undefined);
      resolve();
    };
    const fire = (): void => {
      const left = until - performance.now();
      if (left > 0) arm(left);
      else done();
    };
    const arm = (delay: number): void => {
      timer = setTimeout(fire, delay);
      timer.unref();
    };
    if (Number.isFinite(ms)) arm(ms);
    signal?.addEventListener('abort', done, { once: true });
    wake?.(done);
  });
}
