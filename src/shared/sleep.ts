/**
 * Waits `ms` (with no timer when `ms` is not finite), or less when the signal
 * aborts or the caller ends it: `wake`, when given, is handed the function
 * that ends the wait, and undefined once the wait is over. It resolves either
 * way; the caller checks why. The timer is unref'd and the listener removed.
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: (end: (() => void) | undefined) => void): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      wake?.(undefined);
      resolve();
    };
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    timer?.unref();
    signal?.addEventListener('abort', done, { once: true });
    wake?.(done);
  });
}
