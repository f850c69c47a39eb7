/**
 * One Sentinel-managed master with a replica (the single-instance lock,
 * RedisLock's case) through failovers: with syncReplicas no two holders
 * overlap; without it, a lock written while replication stalled is lost at
 * the failover and handed to a second holder (the negative control).
 */
import { describe, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { failoverChaosFile } from './run/failoverScenario.js';

const budget = budgetMs();
const file = failoverChaosFile(import.meta.filename, 1);

describe('chaos: failovers of a Sentinel-managed master', () => {
  it(
    'no two holders overlap through kill -9, SIGSTOP, lossy and planned failovers when grants wait for the replica',
    () => file.expectSafe({ name: 'failover-single-sync', rules: [4, 5], groups: 1, sync: true, fencing: true, kinds: ['kill', 'pause', 'lossy', 'planned'], budgetMs: budget }),
    scenarioTimeoutMs(budget, 30_000),
  );

  it(
    'reports an overlap when a lock taken without sync while replication stalled is lost at the failover',
    () =>
      file.expectCaught({ name: 'neg-failover-single-no-sync', rules: [5], groups: 1, sync: false, fencing: true }, async ({ groups, lockers: [a], resource, failover }) => {
        await groups[0]?.stallReplication();
        // Longer than the failover may take (up to the harness's 20 s deadline) and B's acquire,
        // as in neg-failover-redlock3-no-sync, whose 30 s once ran out before B's acquire.
        const lockA = await a.acquire(resource, 120_000);
        await failover(0, 'lossy');
        return lockA;
      }),
    60_000,
  );
});
