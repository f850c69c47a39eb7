/**
 * Safe scenarios with process faults on the redis-server nodes: kill -9
 * (also mid-acquire, with replies lost), SIGSTOP beyond the TTL, and restarts
 * without data only after longer than the largest TTL. No overlap allowed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/index.js';
import { HistoryBuffer, ObservedRedlock } from './history/ObservedRedlock.js';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { crashAndDelayedRestart, crashMidAcquire, pauseBeyondTtl } from './run/nemeses.js';
import { DEFAULT_LOCKER, redlockOptions, type ScenarioSpec, waitReady } from './run/scenario.js';

const budget = budgetMs();
const file = chaosFile(import.meta.filename);
const { expectSafe } = file;

describe('chaos: process faults on the nodes', () => {
  it(
    'no two holders overlap while up to 3 nodes are killed with -9 and restarted empty after the max TTL',
    () =>
      expectSafe({
        name: 'kill-delayed-restart',
        rules: [3, 4],
        budgetMs: budget,
        nemeses: [crashAndDelayedRestart(3)],
        locker: { fencing: true },
      }),
    scenarioTimeoutMs(budget),
  );

  it(
    'no two holders overlap while nodes are killed mid-acquire, after their replies were lost or delayed',
    () =>
      expectSafe({
        name: 'kill-mid-acquire',
        rules: [4, 5],
        budgetMs: budget,
        nemeses: [crashMidAcquire(3)],
        locker: { fencing: true },
      }),
    scenarioTimeoutMs(budget),
  );

  it('an acquire that fails with its replies lost on a majority leaves no key on any node (rule 5)', async () => {
    const links = await file.cluster().openLinks();
    const clients = file.cluster().clientsThrough(links);
    const admins = [0, 1, 2, 3, 4].map((i) => file.cluster().admin(i));
    try {
      await waitReady([...clients, ...admins]);
      const locker = new ObservedRedlock(clients, redlockOptions(DEFAULT_LOCKER), {
        client: 'probe',
        sink: new HistoryBuffer(),
        nodeNames: links.nodeNames,
      });
      // As after a restart, the nodes have forgotten the scripts: an undo sent
      // by SHA would get a NOSCRIPT reply that is lost, and never run.
      await Promise.all(admins.map((admin) => admin.script('FLUSH')));
      // n0..n2 apply every request but their replies never come back.
      for (const proxy of links.proxies.slice(0, 3)) proxy.dropReplies();
      const ttlMs = 30_000;
      await expect(locker.tryAcquire('chaos:probe:undo', ttlMs)).rejects.toMatchObject({ code: ErrorCode.QUORUM_UNREACHABLE });
      // The key was written on all five nodes; the undo must have deleted it everywhere,
      // long before its TTL would have (polled, not timed).
      let left: number[] = [];
      for (let i = 0; i < 100; i++) {
        left = await Promise.all(admins.map((admin) => admin.exists('chaos:probe:undo')));
        if (left.every((n) => n === 0)) break;
        await sleep(20);
      }
      expect(left).toEqual([0, 0, 0, 0, 0]);
      // And the nodes did apply the requests whose replies were lost (the probe tested something).
      expect(links.proxies.slice(0, 3).every((p) => p.stats.bytesDropped > 0)).toBe(true);
    } finally {
      await file.cluster().closeScenario(clients);
    }
  });

  it(
    'no two holders overlap while up to 2 nodes are paused with SIGSTOP for longer than the TTL',
    () => expectSafe({ name: 'pause-beyond-ttl', rules: [4], budgetMs: budget, nemeses: [pauseBeyondTtl(2)], locker: { fencing: true } }),
    scenarioTimeoutMs(budget),
  );
});
