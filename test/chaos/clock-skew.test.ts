/**
 * Safe scenario with node clocks that run fast (emulated by the skew nemesis
 * of test/support: libfaketime does not work with Debian's redis-server) or
 * slow, within what the drift factor covers: with driftFactor 0.15 a key
 * must outlive ttl - drift(ttl) = 0.85 ttl - 2 ms of our time, so a node may
 * run up to ~17% fast; the fastest here runs 6% fast. No overlap allowed.
 * The negative control (negative-controls.test.ts) runs clocks 3x fast.
 */
import { describe, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { clockSkew } from './run/nemeses.js';

const budget = budgetMs();
const { expectSafe } = chaosFile(import.meta.filename);

describe('chaos: node clocks within the drift factor', () => {
  it(
    'no two holders overlap while node clocks run up to 6% fast (and one at half speed) with driftFactor 0.15',
    () =>
      expectSafe({
        name: 'clock-skew-within-drift',
        rules: [2, 7],
        budgetMs: budget,
        nemeses: [clockSkew([1.06, 1.06, 1.04, 1.02, 0.5])],
        locker: { driftFactor: 0.15, fencing: true },
      }),
    scenarioTimeoutMs(budget),
  );
});
