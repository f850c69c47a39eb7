/**
 * Wait lines across processes (issue #17): waiter processes with several
 * waiters each acquire() one hot resource on 5 real nodes while waiter
 * processes are killed (-9) and SIGSTOPped in line, holder processes are
 * killed mid-hold, and (second scenario) nodes are killed and paused. No two
 * holders may overlap, and the resource may not sit free while live waiters
 * want it for longer than the design's dead-waiter bound (lease + one backoff
 * delay) plus slack for a busy machine: see run/lineScenario.ts for what is
 * measured, and check/liveness.ts for the exact definition.
 */
import { describe, expect, it } from 'vitest';
import { formatFindings } from './check/report.js';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { MAX_TIME_BASE_DEVIATION_MS } from './run/childScenario.js';
import { LIVENESS_LIMIT_MS, type LineScenarioOutcome, type LineScenarioSpec, runLineScenario } from './run/lineScenario.js';

const budget = budgetMs();
const file = chaosFile(import.meta.filename);

const CONTENTION: Omit<LineScenarioSpec, 'name' | 'rules' | 'budgetMs' | 'nodeFaults'> = {
  processes: 4,
  lockersPerProcess: 1,
  waitersPerLocker: 3,
  spares: 2,
  waiterKills: true,
  waiterStops: true,
  holderKills: true,
};

function expectSafeAndLive(name: string, outcome: LineScenarioOutcome): void {
  file.report.add(outcome.summary);
  const { healthy, quorumUp } = outcome.liveness;
  console.log(
    `[chaos] ${name}: liveness ${healthy.longestMs.toFixed(0)} ms over ${(healthy.coveredMs / 1000).toFixed(1)} s healthy ` +
      `(quorum up: ${quorumUp.longestMs.toFixed(0)} ms), ${healthy.losses} waiter losses, ${outcome.processesStarted} processes, ` +
      `longest stretch ${JSON.stringify(healthy.longest)}`,
  );
  if (!outcome.summary.passed || process.env['CHAOS_KEEP_HISTORY'] === '1') {
    console.error(`[chaos] history saved to ${file.report.saveHistory(name, outcome.history)}`);
  }
  expect(outcome.timeBaseDeviationMs).toBeLessThanOrEqual(MAX_TIME_BASE_DEVIATION_MS);
  expect(formatFindings(outcome.check, outcome.history)).toBe('');
  expect(outcome.summary.unexpectedErrors).toEqual([]);
  expect(outcome.summary.acquisitions).toBeGreaterThan(0);
  expect(healthy.longestMs).toBeLessThanOrEqual(LIVENESS_LIMIT_MS);
}

describe('chaos: wait lines across processes', () => {
  it(
    'no overlap, and no waiter starved beyond the dead-waiter bound, while waiters are killed and stopped in line and holders killed mid-hold',
    async () => {
      const outcome = await runLineScenario(file.cluster(), { name: 'wait-line', rules: [3, 4], budgetMs: budget, nodeFaults: false, ...CONTENTION });
      expectSafeAndLive('wait-line', outcome);
    },
    scenarioTimeoutMs(budget, 30_000),
  );

  it(
    'the same with nodes killed and paused: no overlap; liveness bounded while all nodes are up',
    async () => {
      const outcome = await runLineScenario(file.cluster(), {
        name: 'wait-line-node-faults',
        rules: [3, 4, 5],
        budgetMs: budget,
        nodeFaults: true,
        ...CONTENTION,
      });
      expectSafeAndLive('wait-line-node-faults', outcome);
    },
    scenarioTimeoutMs(budget, 30_000),
  );
});
