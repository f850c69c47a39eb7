/**
 * Safe scenarios on the network between lockers and nodes: contention alone,
 * then latency (under and over the node timeout), blackholes, replies dropped
 * after the request was applied, resets right after a request, and cut-offs,
 * on single links and on whole nodes; and lockers that mostly re-enter their
 * locks (nested, and by value from another locker) under those faults and
 * paused nodes. No overlap allowed.
 */
import { describe, expect, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { networkFaults, pauseBeyondTtl } from './run/nemeses.js';
import { DEFAULT_LOCKER, type ScenarioSpec } from './run/scenario.js';

const budget = budgetMs();
const file = chaosFile(import.meta.filename);
const { expectSafe } = file;
/** Mostly re-entered locks, beside plain holders that would take any key a re-entry gave away. */
const REENTRY_MIX = Object.freeze({ hold: 20, extend: 0, try: 10, using: 10, multi: 0, overstay: 0, reenter: 60 });

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

  it(
    'no two holders overlap while lockers re-enter their locks, nested and by value, under network faults and paused nodes',
    async () => {
      const { summary } = await expectSafe({
        name: 'reentry-faults',
        rules: [4, 6, 7],
        budgetMs: budget,
        nemeses: [networkFaults(DEFAULT_LOCKER.nodeTimeoutMs), pauseBeyondTtl(2)],
        locker: { fencing: true },
        mix: REENTRY_MIX,
      });
      // Nested re-entries follow every reenter action's acquire. By value they come after and can all
      // be refused in a short run on a loaded machine (a node timeout): the long runs count them.
      expect(summary.reentries?.nested).toBeGreaterThan(0);
    },
    scenarioTimeoutMs(budget),
  );
});
