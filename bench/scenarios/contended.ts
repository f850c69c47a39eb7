/**
 * One key, `waiters` workers in one process wanting it, each holding it for
 * HOLD_MS and then wanting it again (steady), or wanting it once each, all at
 * the same moment (burst: 200 requests for one order arrive together). In the
 * steady case a library that lets the releaser take the lock right back keeps
 * the lock busy while starving the others; a burst shows what it costs to
 * serve every waiter. Measures handoffs per second, how long
 * waiters wait, how evenly the lock is shared, and (in the runner) what it
 * costs Redis. Mutual exclusion is checked along the way: overlaps must be 0.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HeldLock } from '../contenders/types.js';
import { jainIndex, minMaxShare, quantile } from '../stats.js';
import { now } from './clock.js';
import type { Scenario } from './types.js';

export const HOLD_MS = 1;
/** Pause after an unexpected failure, so a broken node is not hammered in a tight loop. */
const ERROR_PAUSE_MS = 5;

export function contended(waiters: number, pattern: 'steady' | 'burst' = 'steady'): Scenario {
  const burst = pattern === 'burst';
  return {
    id: burst ? `burst-${waiters}` : `contended-${waiters}`,
    title: burst
      ? `one key, a burst of ${waiters} waiters wanting it once each, ${HOLD_MS} ms hold`
      : `one key, ${waiters} waiters, ${HOLD_MS} ms hold`,
    kind: 'contended',
    headline: 'cyclesPerSec',
    columns: ['cyclesPerSec', 'waitP50Ms', 'waitP99Ms', 'reqsPerCycle', 'cmdsPerCycle', 'jain', 'starvedPct', 'giveUps', 'errors', 'overlaps'],
    async run({ locker, keyPrefix, ttlMs, budget }) {
      const key = `${keyPrefix}:k`;
      const stop = new AbortController();
      // Every waiter's acquire may listen on it at once (several listeners each).
      setMaxListeners(waiters * 4 + 10, stop.signal);
      const shares: number[] = new Array<number>(waiters).fill(0);
      const wantingSince: number[] = new Array<number>(waiters).fill(Number.NaN);
      const waits: number[] = [];
      let holder = -1;
      let overlaps = 0;
      let giveUps = 0;
      let errors = 0;
      let inWindow = 0;
      let total = 0;

      const started = now();
      const windowEnd = started + budget.maxMs;
      // Waits still going on when the window closes count with the time waited
      // so far (a lower bound); leaving them out would hide starvation.
      const closeWindow = (): void => {
        for (const since of wantingSince) if (Number.isFinite(since)) waits.push(windowEnd - since);
        stop.abort();
      };
      const windowTimer = setTimeout(closeWindow, budget.maxMs);

      const acquire = async (): Promise<HeldLock | null> => {
        while (!stop.signal.aborted) {
          try {
            const lock = await locker.acquire(key, ttlMs, stop.signal);
            if (lock !== null) return lock;
            if (!stop.signal.aborted) giveUps++;
          } catch {
            errors++;
            await sleep(ERROR_PAUSE_MS);
          }
        }
        return null;
      };

      const waiter = async (id: number): Promise<void> => {
        let served = 0;
        while (!stop.signal.aborted && total < budget.maxCycles && !(burst && served > 0)) {
          const wantAt = now();
          wantingSince[id] = wantAt;
          const lock = await acquire();
          wantingSince[id] = Number.NaN;
          // A library without an AbortSignal may still hand out the lock after
          // the window: release it at once, and count it only for commands.
          const gotAt = now();
          if (lock === null) break;
          if (holder !== -1) overlaps++;
          holder = id;
          if (gotAt <= windowEnd) {
            waits.push(gotAt - wantAt);
            shares[id] = (shares[id] ?? 0) + 1;
            inWindow++;
            await sleep(HOLD_MS);
          }
          if (holder === id) holder = -1;
          try {
            await lock.release();
          } catch {
            errors++;
          }
          total++;
          served++;
        }
      };

      const everyone = Promise.all(Array.from({ length: waiters }, (_, id) => waiter(id)));
      const drainCap = new AbortController();
      const drained = await Promise.race([
        everyone.then(() => true),
        sleep(budget.maxMs + budget.drainMs, false, { signal: drainCap.signal }).catch(() => false),
      ]);
      drainCap.abort();
      clearTimeout(windowTimer);
      if (!stop.signal.aborted) closeWindow(); // maxCycles reached before the window closed

      const windowMs = Math.min(now(), windowEnd) - started;
      return {
        sample: {
          cyclesPerSec: (inWindow / windowMs) * 1000,
          waitP50Ms: quantile(waits, 0.5),
          waitP99Ms: quantile(waits, 0.99),
          jain: jainIndex(shares),
          minMaxShare: minMaxShare(shares),
          starvedPct: (shares.filter((n) => n === 0).length / waiters) * 100,
          giveUps,
          errors,
          overlaps,
        },
        cyclesTotal: total,
        note: drained ? undefined : `acquires still in flight ${budget.drainMs} ms after the window; left behind`,
      };
    },
  };
}
