/**
 * Redlock over independent Sentinel-managed groups (a master, a replica and
 * three sentinels each), one group failing over at a time: with syncReplicas
 * no two holders overlap. Without it, failovers that lose the lock's key on
 * a majority of groups in turn are the restart-empty case, and run as a
 * negative control.
 */
import { describe, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { failoverChaosFile } from './run/failoverScenario.js';

const budget = budgetMs();
const file = failoverChaosFile(import.meta.filename, 5);
const KINDS = ['kill', 'pause', 'lossy', 'planned'] as const;

describe('chaos: Redlock over Sentinel-managed groups', () => {
  it(
    'no two holders overlap on 3 groups while one at a time fails over, when grants wait for the replicas',
    () => file.expectSafe({ name: 'failover-redlock3-sync', rules: [3, 4, 5], groups: 3, sync: true, fencing: true, kinds: KINDS, budgetMs: budget }),
    scenarioTimeoutMs(budget, 30_000),
  );

  it(
    'no two holders overlap on 5 groups while one at a time fails over, when grants wait for the replicas',
    () => file.expectSafe({ name: 'failover-redlock5-sync', rules: [3, 4, 5], groups: 5, sync: true, fencing: true, kinds: KINDS, budgetMs: budget }),
    scenarioTimeoutMs(budget, 30_000),
  );

  it(
    'reports an overlap when, without sync, lossy failovers of two of 3 groups in turn lose a held lock',
    () =>
      file.expectCaught({ name: 'neg-failover-redlock3-no-sync', rules: [2, 3], groups: 3, sync: false, fencing: true }, async ({ groups, lockers: [a], resource, failover }) => {
        await Promise.all([groups[0]?.stallReplication(), groups[1]?.stallReplication()]);
        // Longer than both failovers may take together (up to the harness's 20 s deadline each,
        // on a busy machine 16 and 19 s) and B's acquire: with 30 s, A's lock once expired
        // before B took it, and there was no overlap to catch.
        const lockA = await a.acquire(resource, 120_000);
        await failover(0, 'lossy');
        await failover(1, 'lossy');
        return lockA;
      }),
    90_000,
  );
});
