import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/shared/sleep.js';

describe('sleep', () => {
  it('lasts at least its time, though Node fires a timer up to a millisecond early by the monotonic clock', async () => {
    // Node measures timers in whole milliseconds of the loop's time: armed at
    // x.9 ms, a 2 ms timer may fire at (x+2).0. Plain setTimeout(2) lasted
    // less than 2 ms about 4 times in 100 here; 200 tries see it almost surely.
    const lasted: number[] = [];
    for (let i = 0; i < 200; i++) {
      const offset = performance.now() + Math.random();
      while (performance.now() < offset);
      const start = performance.now();
      await sleep(2);
      lasted.push(performance.now() - start);
    }
    expect(lasted.filter((ms) => ms < 2)).toEqual([]);
  });

  it('ends at once when the caller ends it or the signal aborts', async () => {
    let end: (() => void) | undefined;
    const start = performance.now();
    const waiting = sleep(10_000, undefined, (e) => (end = e));
    end?.();
    await waiting;
    const controller = new AbortController();
    const aborted = sleep(10_000, controller.signal);
    controller.abort();
    await aborted;
    expect(performance.now() - start).toBeLessThan(5_000);
    expect(end).toBeUndefined();
  });
});
