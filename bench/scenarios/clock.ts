import { performance } from 'node:perf_hooks';

/** Monotonic milliseconds with sub-µs resolution. */
export const now = (): number => performance.now();
