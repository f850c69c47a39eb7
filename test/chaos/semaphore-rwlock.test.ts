/**
 * The semaphore and the read-write lock on 5 real nodes under kills,
 * pauses, network faults and clock skew within the drift factor: never more
 * than `limit` permits at once, never a writer beside anyone. And the
 * negative controls the checks must catch: a majority of nodes restarted
 * empty at once (both primitives), a semaphore scored with client clocks
 * under client skew, and a majority-quorum counting semaphore with limit 2
 * under racing acquirers.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedlockReadWriteLock, RedlockSemaphore } from '../../src/index.js';
import { patient } from '../support/patient.js';
import type { HoldWindow } from './check/permits.js';
import { sharedNow } from './history/timeBase.js';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { ClientClockSemaphore, countingMajority } from './run/cheatingSemaphores.js';
import { ChaosCluster } from './run/cluster.js';
import { clockSkew, crashAndDelayedRestart, networkFaults, pauseBeyondTtl } from './run/nemeses.js';
import { PERMIT_LOCKER_OPTIONS, readWriteFindings, runPermitScenario, semaphoreFindings } from './run/permitScenario.js';
import { waitReady } from './run/scenario.js';
import { sleep } from './run/sleep.js';

const budget = budgetMs();
const LIMIT = 3;
let cluster: ChaosCluster;

beforeAll(async () => {
  cluster = await ChaosCluster.start(5);
});
afterAll(async () => {
  await cluster?.stop();
});

/** One fault kind per scenario, as the mutex's chaos files do: together they would leave no quorum most of the time. */
const FAULTS = [
  { name: 'kill -9 ≤2 nodes', nemeses: () => [crashAndDelayedRestart(2)] },
  { name: 'SIGSTOP ≤2 nodes', nemeses: () => [pauseBeyondTtl(2)] },
  { name: 'network faults', nemeses: () => [networkFaults(PERMIT_LOCKER_OPTIONS.nodeTimeoutMs)] },
  { name: 'clock skew within drift', nemeses: () => [clockSkew([1, 1.004, 1, 0.996, 1])] },
] as const;

async function linkedClients(): Promise<Redis[]> {
  const clients = cluster.clientsThrough(await cluster.openLinks());
  await waitReady(clients);
  return clients;
}

describe('chaos: semaphore and read-write lock on 5 nodes', () => {
  it.each(FAULTS)(
    `a semaphore never has more than its limit (${LIMIT}) of permits held: $name`,
    async ({ name, nemeses }) => {
      const outcome = await runPermitScenario(cluster, {
        name: `semaphore, ${name}`,
        clients: 6,
        budgetMs: budget,
        nemeses: nemeses(),
        keyPattern: '{chaos:semaphore*',
        client: (clients) => {
          const semaphore = new RedlockSemaphore(clients, { ...PERMIT_LOCKER_OPTIONS, limit: LIMIT });
          return (rng) => {
            const permits = rng.int(1, 2);
            return {
              permits,
              exclusive: false,
              acquire: (ttlMs) => semaphore.acquire('chaos:semaphore', ttlMs, { permits }),
              tryAcquire: (ttlMs) => semaphore.tryAcquire('chaos:semaphore', ttlMs, { permits }),
            };
          };
        },
      });
      console.log(`[chaos] semaphore, ${name}: ${outcome.acquisitions} acquisitions, ${outcome.refused} refused, ${outcome.faults} faults`);
      expect(semaphoreFindings(outcome.windows, LIMIT)).toEqual([]);
      expect(outcome.unexpected).toEqual([]);
      expect(outcome.acquisitions).toBeGreaterThan(0);
    },
    scenarioTimeoutMs(budget),
  );

  it.each(FAULTS)(
    'a writer never holds together with any other holder: $name',
    async ({ name, nemeses }) => {
      const outcome = await runPermitScenario(cluster, {
        name: `rwlock, ${name}`,
        clients: 6,
        budgetMs: budget,
        nemeses: nemeses(),
        keyPattern: '{chaos:rwlock*',
        client: (clients) => {
          const rw = new RedlockReadWriteLock(clients, { ...PERMIT_LOCKER_OPTIONS, writerClaimMs: 300 });
          return (rng) => {
            const side = rng.chance(0.25) ? rw.write : rw.read;
            return {
              permits: 1,
              exclusive: side === rw.write,
              acquire: (ttlMs) => side.acquire('chaos:rwlock', ttlMs),
              tryAcquire: (ttlMs) => side.tryAcquire('chaos:rwlock', ttlMs),
            };
          };
        },
      });
      const writes = outcome.windows.filter((w) => w.exclusive).length;
      console.log(`[chaos] rwlock, ${name}: ${outcome.acquisitions} acquisitions (${writes} writes), ${outcome.refused} refused, ${outcome.faults} faults`);
      expect(readWriteFindings(outcome.windows)).toEqual([]);
      expect(outcome.unexpected).toEqual([]);
      expect(writes).toBeGreaterThan(0);
      expect(outcome.acquisitions - writes).toBeGreaterThan(0);
    },
    scenarioTimeoutMs(budget),
  );
});

describe('chaos: negative controls of the semaphore and the read-write lock', () => {
  const patientRetries = { ...patient, acquireTimeoutMs: 10_000, retry: { baseDelayMs: 20, maxDelayMs: 200 } };

  /**
   * Granted at a quorum, the slowest nodes' writes may still be on their way, and ioredis
   * resends them after the restart: wait until every node has them, so the restart empties it.
   */
  async function untilEveryNodeHas(keys: readonly string[]): Promise<void> {
    const admins = [0, 1, 2, 3, 4].map((i) => cluster.admin(i));
    await waitReady(admins);
    for (let i = 0; i < 200; i++) {
      const counts = await Promise.all(admins.map((admin) => admin.exists(...keys)));
      if (counts.every((count) => count === keys.length)) return;
      await sleep(10);
    }
    throw new Error(`not every node took ${keys.join(', ')}`);
  }

  async function restartMajorityEmpty(): Promise<void> {
    await Promise.all([0, 1, 2].map((i) => cluster.set.node(i).restart({ empty: true })));
  }

  it('catches a semaphore over its limit when a majority of nodes restarts empty at once', async () => {
    const clients = await linkedClients();
    try {
      const semaphore = new RedlockSemaphore(clients, { ...patientRetries, limit: 2 });
      const first = await semaphore.acquire('control:restart', 30_000, { permits: 2 });
      const firstFrom = sharedNow();
      await untilEveryNodeHas(first.resources.slice(1));
      await restartMajorityEmpty();
      const second = await semaphore.acquire('control:restart', 30_000);
      const secondFrom = sharedNow();
      await sleep(20);
      const now = sharedNow();
      const windows: HoldWindow[] = [
        { holder: 'first', permits: 2, exclusive: false, from: firstFrom, to: now },
        { holder: 'second', permits: 1, exclusive: false, from: secondFrom, to: now },
      ];
      expect(semaphoreFindings(windows, 2)).toHaveLength(1);
      await Promise.all([first.release(), second.release()]);
    } finally {
      await cluster.closeScenario(clients);
    }
  }, 60_000);

  it('catches a writer beside a reader when a majority of nodes restarts empty at once', async () => {
    const clients = await linkedClients();
    try {
      const rw = new RedlockReadWriteLock(clients, patientRetries);
      const writer = await rw.write.acquire('control:rw-restart', 30_000);
      const writerFrom = sharedNow();
      await untilEveryNodeHas([writer.resources[0]!]);
      await restartMajorityEmpty();
      const reader = await rw.read.acquire('control:rw-restart', 30_000);
      const readerFrom = sharedNow();
      await sleep(20);
      const now = sharedNow();
      const windows: HoldWindow[] = [
        { holder: 'writer', permits: 1, exclusive: true, from: writerFrom, to: now },
        { holder: 'reader', permits: 1, exclusive: false, from: readerFrom, to: now },
      ];
      expect(readWriteFindings(windows)).toHaveLength(1);
      await Promise.all([writer.release(), reader.release()]);
    } finally {
      await cluster.closeScenario(clients);
    }
  }, 60_000);

  it('catches a client-clock semaphore (scored like redis-semaphore’s) over its limit under client skew', async () => {
    const node = cluster.admin(0);
    try {
      await waitReady([node]);
      const ttlMs = 1_000;
      const onTime = new ClientClockSemaphore(node, 1, 0);
      const ahead = new ClientClockSemaphore(node, 1, 2 * ttlMs);
      const windows: HoldWindow[] = [];
      expect(await onTime.tryAcquire('control:client-clock', 'on-time', ttlMs)).toBe(true);
      windows.push({ holder: 'on-time', permits: 1, exclusive: false, from: sharedNow(), to: sharedNow() + ttlMs });
      // The holder on time believes it holds for a second; a client whose clock runs 2 s ahead prunes it as expired.
      expect(await ahead.tryAcquire('control:client-clock', 'ahead', ttlMs)).toBe(true);
      windows.push({ holder: 'ahead', permits: 1, exclusive: false, from: sharedNow(), to: sharedNow() + ttlMs });
      expect(semaphoreFindings(windows, 1)).toHaveLength(1);
    } finally {
      await cluster.closeScenario();
    }
  });

  it('catches a majority-quorum counting semaphore with limit 2 admitting 3 racing acquirers', async () => {
    const links = await Promise.all([0, 1, 2].map(() => cluster.openLinks()));
    const clients = links.map((l) => cluster.clientsThrough(l));
    try {
      await waitReady(clients.flat());
      // Per-link delays (ms) that make each node see the three in another order, as in issue 31:
      // A wins nodes 1, 2, 3 and 5; B wins 1, 4 and 5; C wins 2, 3 and 4.
      const delays = [
        [0, 0, 0, 60, 0], // A
        [30, 60, 60, 0, 30], // B
        [60, 30, 30, 30, 60], // C
      ];
      links.forEach((l, who) => l.proxies.forEach((proxy, node) => (proxy.latencyMs = delays[who]![node]!)));
      const started = sharedNow();
      const granted = await Promise.all(['A', 'B', 'C'].map((id, who) => countingMajority(clients[who]!, 'control:counting', id, 5_000, 2)));
      const windows = granted.flatMap((ok, who): HoldWindow[] => (ok ? [{ holder: 'ABC'[who]!, permits: 1, exclusive: false, from: started, to: started + 5_000 }] : []));
      expect(granted).toEqual([true, true, true]);
      expect(semaphoreFindings(windows, 2)).toHaveLength(1);
    } finally {
      for (const l of links) for (const proxy of l.proxies) proxy.heal();
      await cluster.closeScenario(clients.flat());
    }
  });
});
