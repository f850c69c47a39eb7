/**
 * Safe scenario with lockers in separate processes: three workers with two
 * lockers each (worker/chaosWorker.ts) contend while nodes are killed and
 * restarted after the max TTL, a worker is paused with SIGSTOP beyond the TTL,
 * and Date.now() jumps by up to an hour inside the workers (rule 1: validity
 * is counted on the monotonic clock only). Histories meet on the shared time
 * base (history/timeBase.ts). No overlap allowed.
 */
import { describe, expect, it } from 'vitest';
import { formatFindings } from './check/report.js';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { MAX_TIME_BASE_DEVIATION_MS, runChildScenario } from './run/childScenario.js';
import { crashAndDelayedRestart } from './run/nemeses.js';

const budget = budgetMs();
const file = chaosFile(import.meta.filename);

describe('chaos: lockers in separate processes', () => {
  it(
    'no two holders overlap across processes with node crashes, a paused locker process and wall-clock jumps',
    async () => {
      const outcome = await runChildScenario(file.cluster(), {
        name: 'child-processes',
        rules: [1, 3, 4],
        budgetMs: budget,
        workers: 3,
        lockersPerWorker: 2,
        nemeses: [crashAndDelayedRestart(2)],
        pauseWorkers: true,
        wallClockJumps: true,
        locker: { fencing: true },
      });
      file.report.add(outcome.summary);
      if (!outcome.summary.passed) console.error(`[chaos] history saved to ${file.report.saveHistory('child-processes', outcome.history)}`);
      expect(outcome.timeBaseDeviationMs).toBeLessThanOrEqual(MAX_TIME_BASE_DEVIATION_MS);
      expect(formatFindings(outcome.check, outcome.history)).toBe('');
      expect(outcome.summary.unexpectedErrors).toEqual([]);
      expect(outcome.summary.acquisitions).toBeGreaterThan(0);
      expect(new Set(outcome.history.ops.map((op) => op.client.split('.')[0])).size).toBe(3);
    },
    scenarioTimeoutMs(budget, 20_000),
  );
});
