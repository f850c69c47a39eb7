/**
 * 64 workers in one process, each on its own key, sharing the contender's
 * clients: how many lock cycles per second one process gets through.
 */
import { setMaxListeners } from 'node:events';
import { loopTurns, now } from './clock.js';
import type { Scenario } from './types.js';

export const WORKERS = 64;

export const parallel: Scenario = {
  id: 'parallel-64',
  title: `${WORKERS} concurrent workers, distinct keys`,
  kind: 'uncontended',
  headline: 'cyclesPerSec',
  // What a cycle costs the client, whether the client kept working, and what it cost Redis: issue #30's three tells.
  columns: ['cyclesPerSec', 'cpuUsPerCycle', 'cpuPct', 'loopTurnsPerCycle', 'redisUsPerCycle', 'reqsPerCycle', 'cmdsPerCycle', 'errors'],
  async run({ locker, keyPrefix, ttlMs, budget }) {
    const never = new AbortController().signal;
    // Every worker's acquire may listen on it at once (a retry after a node timeout does).
    setMaxListeners(WORKERS * 4, never);
    const perWorker = Math.max(1, Math.ceil(budget.maxCycles / WORKERS));
    let cycles = 0;
    let errors = 0;
    const started = now();
    const cpuAtStart = process.cpuUsage();
    const turnsAtStart = loopTurns();
    const end = started + budget.maxMs;
    const worker = async (index: number): Promise<void> => {
      const key = `${keyPrefix}:w${index}`;
      for (let done = 0; done < perWorker && now() < end; done++) {
        try {
          const lock = await locker.acquire(key, ttlMs, never);
          if (lock === null) {
            errors++;
            continue;
          }
          await lock.release();
          cycles++;
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
    const elapsedMs = now() - started;
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuUs = cpu.user + cpu.system;
    const perCycle = (total: number): number => total / Math.max(1, cycles);
    return {
      sample: {
        cyclesPerSec: (cycles / elapsedMs) * 1000,
        cpuUsPerCycle: perCycle(cpuUs),
        cpuPct: cpuUs / 10 / elapsedMs,
        loopTurnsPerCycle: perCycle(loopTurns() - turnsAtStart),
        errors,
      },
      cyclesTotal: cycles,
    };
  },
};
