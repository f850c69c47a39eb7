/**
 * Safe scenarios on the network between lockers and nodes: contention alone,
 * then latency (under and over the node timeout), blackholes, replies dropped
 * after the request was applied, resets right after a request, and cut-offs,
 * on single links and on whole nodes. No overlap allowed.
 */
import { describe, expect, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { networkFaults } from './run/nemeses.js';
import { DEFAULT_LOCKER, type ScenarioSpec } from './run/scenario.js';

const budget = budgetMs();
const file = chaosFile(import.meta.filename);
const { expectSafe } = file;

describe('chaos: contention and network faults', () => {
  it(
    'no two holders overlap when six lockers contend on three resources without faults',
    () => expectSafe({ name: 'contention', rules: [3, 6, 7], budgetMs: budget, clients: 6, nemeses: [], locker: { fencing: true } }),
    scenarioTimeoutMs(budget),
  );

  it(
    'no two holders overlap under latency, blackholes, lost replies, resets and cut-offs on links and nodes',
    () =>
      expectSafe({
        name: 'network-faults',
        rules: [4, 6, 7],
        budgetMs: budget,
        nemeses: [networkFaults(DEFAULT_LOCKER.nodeTimeoutMs)],
        locker: { fencing: true },
      }),
    scenarioTimeoutMs(budget),
  );
});
