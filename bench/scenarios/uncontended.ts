/**
 * One client, one key, nobody else: acquire then release, again and again.
 * The cycle time is what a caller pays for the lock when there is no contention.
 */
import { quantile } from '../stats.js';
import { now } from './clock.js';
import type { Scenario } from './types.js';

export const uncontended: Scenario = {
  id: 'uncontended',
  title: 'uncontended: one client, acquire + release in sequence',
  kind: 'uncontended',
  // Measured after the rounds by the runner (scenarios/mixed.ts): the steadiest ratios.
  headline: 'mixedP50Us',
  columns: ['mixedP50Us', 'p50Us', 'p99Us', 'cyclesPerSec', 'cpuUsPerCycle', 'reqsPerCycle', 'cmdsPerCycle', 'errors'],
  async run({ locker, keyPrefix, ttlMs, budget }) {
    const key = `${keyPrefix}:k`;
    const never = new AbortController().signal;
    const cycleMs: number[] = [];
    let errors = 0;
    const started = now();
    const cpuAtStart = process.cpuUsage();
    const end = started + budget.maxMs;
    while (cycleMs.length < budget.maxCycles && now() < end) {
      const t0 = now();
      try {
        const lock = await locker.acquire(key, ttlMs, never);
        if (lock === null) {
          errors++;
          continue;
        }
        await lock.release();
      } catch {
        errors++;
        if (errors > budget.maxCycles) break;
        continue;
      }
      cycleMs.push(now() - t0);
    }
    const elapsedMs = now() - started;
    const cpu = process.cpuUsage(cpuAtStart);
    return {
      sample: {
        p50Us: quantile(cycleMs, 0.5) * 1000,
        p99Us: quantile(cycleMs, 0.99) * 1000,
        cyclesPerSec: (cycleMs.length / elapsedMs) * 1000,
        cpuUsPerCycle: (cpu.user + cpu.system) / Math.max(1, cycleMs.length),
        errors,
      },
      cyclesTotal: cycleMs.length,
    };
  },
};
