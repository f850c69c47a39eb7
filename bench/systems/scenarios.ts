/**
 * The scenarios of `npm run bench:systems`, the same for every system. Each
 * takes what a contender has open (its system in this process, its worker
 * processes) and returns plain numbers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { jainIndex, quantile } from '../stats.js';
import type { Holder } from './locks/types.js';
import type { HotReport } from './worker.js';
import type { SystemWorker } from './workers.js';

const now = () => performance.now();

/** Acquire + release times (ms) of `cycles` cycles of `holder` on `name`. */
export async function cycles(holder: Holder, name: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = now();
    await (await holder.acquire(name)).release();
    times.push(now() - started);
  }
  return times;
}

/** Each holder on a lock of its own for `phaseMs`: sections per second and errors. */
export async function distinct(holders: readonly Holder[], prefix: string, phaseMs: number): Promise<{ perSec: number; errors: number }> {
  let sections = 0;
  let errors = 0;
  const started = now();
  const end = started + phaseMs;
  await Promise.all(
    holders.map(async (holder, index) => {
      while (now() < end) {
        try {
          await (await holder.acquire(`${prefix}:w${index}`)).release();
          sections++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { perSec: (sections / (now() - started)) * 1000, errors };
}

export interface HotResult {
  readonly perSec: number;
  readonly waitP99Ms: number;
  /** Jain's index over every waiter's sections: 1 = all got the same share. */
  readonly fairness: number;
  readonly errors: number;
}

/** Every worker's waiters on one lock for `phaseMs`, each hold `holdMs`. */
export async function hot(workers: readonly SystemWorker[], name: string, waiters: number, phaseMs: number, holdMs: number): Promise<HotResult> {
  const started = now();
  const reports = await Promise.all(workers.map((w) => w.send<HotReport>({ op: 'hot', name, waiters, phaseMs, holdMs })));
  const elapsed = now() - started;
  const sections = reports.flatMap((r) => r.sections);
  return {
    perSec: (sections.reduce((a, b) => a + b, 0) / elapsed) * 1000,
    waitP99Ms: quantile(
      reports.flatMap((r) => r.waits),
      0.99,
    ),
    fairness: jainIndex(sections),
    errors: reports.reduce((sum, r) => sum + r.errors, 0),
  };
}

/** `holder` takes the lock and is killed with -9: ms from the kill until `next` holds it. */
export async function killHolder(holder: SystemWorker, next: SystemWorker, name: string): Promise<number> {
  await holder.send({ op: 'hold', name });
  const taken = next.send({ op: 'take', name });
  // The next one is waiting in line before the holder dies.
  await sleep(300);
  const killed = now();
  await holder.kill();
  await taken;
  return now() - killed;
}

export interface FaultResult {
  readonly sections: number;
  readonly errors: number;
  /** The longest time in the phase in which no holder completed a section. */
  readonly longestStallMs: number;
}

/**
 * `holders` on locks of their own for `phaseMs`; `fault()` runs `faultAtMs`
 * in. An acquire or release that fails, or is still pending `graceMs` after
 * the phase, counts as an error.
 */
export async function underFault(
  holders: readonly Holder[],
  prefix: string,
  phaseMs: number,
  faultAtMs: number,
  fault: () => Promise<unknown>,
  graceMs = 5_000,
): Promise<FaultResult> {
  const started = now();
  const end = started + phaseMs;
  const completions: number[] = [];
  let errors = 0;
  const timer = sleep(faultAtMs).then(fault);
  const giveUp = sleep(phaseMs + graceMs).then(() => 'timeout' as const);
  await Promise.all(
    holders.map(async (holder, index) => {
      while (now() < end) {
        const outcome = await Promise.race([
          (async () => {
            await (await holder.acquire(`${prefix}:f${index}`)).release();
            return 'done' as const;
          })().catch(() => 'error' as const),
          giveUp,
        ]);
        if (outcome === 'done') completions.push(now());
        else errors++;
        if (outcome === 'timeout') return;
        // A failing system answers at once: do not spin on its errors.
        if (outcome === 'error') await sleep(10);
      }
    }),
  );
  await timer;
  const marks = [started, ...completions.filter((t) => t <= end).sort((a, b) => a - b), end];
  let longest = 0;
  for (let i = 1; i < marks.length; i++) longest = Math.max(longest, marks[i]! - marks[i - 1]!);
  return { sections: completions.length, errors, longestStallMs: longest };
}
