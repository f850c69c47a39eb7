/**
 * Each other system's lock recipe (bench/systems/locks/) against its own
 * servers, started here: two worker processes take the same lock in turns
 * and never overlap; a holder killed with -9 lets the next one in (after its
 * lease or session runs out; at once for Postgres). The control runs the two
 * on different locks and must see them overlap: the check can fail.
 *
 * `npm run test:systems`, not part of `npm test`: it starts a JVM ensemble
 * and an etcd cluster. A system whose server is not installed is skipped,
 * with the reason missingReason() gives.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../bench/systems/locks/postgres.js';
import type { SystemSpec } from '../../bench/systems/locks/types.js';
import { EtcdCluster } from '../../bench/systems/servers/etcd.js';
import { missingReason, type SystemName } from '../../bench/systems/servers/installed.js';
import { PostgresServer } from '../../bench/systems/servers/postgres.js';
import { ZooKeeperEnsemble } from '../../bench/systems/servers/zookeeper.js';
import { SystemWorker } from '../../bench/systems/workers.js';
import { checkExclusion } from './exclusion.js';

const SCRIPT = { source: join(import.meta.dirname, '../../bench/systems/worker.ts') };
const ROUNDS = 40;

interface Server {
  spec: SystemSpec;
  stop(): Promise<void>;
}

const systems: [SystemName, (dir: string) => Promise<Server>][] = [
  ['etcd', async (dir) => {
    const cluster = await EtcdCluster.start(dir);
    return { spec: { system: 'etcd', endpoints: cluster.endpoints, ttlSec: 2 }, stop: () => cluster.stop() };
  }],
  ['zookeeper', async (dir) => {
    const ensemble = await ZooKeeperEnsemble.start(dir);
    // 4 s: the shortest session the shipped tickTime (2000) allows.
    return { spec: { system: 'zookeeper', connectString: ensemble.connectString, sessionTimeoutMs: 4000 }, stop: () => ensemble.stop() };
  }],
  ['postgres', async (dir) => {
    const server = await PostgresServer.start(dir);
    return { spec: { system: 'postgres', url: server.url }, stop: () => server.stop() };
  }],
];

for (const [name, start] of systems) {
  const reason = missingReason(name);
  // Skipped only where its server cannot run here; the reason is printed.
  if (reason !== undefined) console.warn(`[test:systems] skipping ${name}: ${reason}`);
  describe.skipIf(reason !== undefined)(`${name} lock recipe`, () => {
    let dir: string;
    let server: Server;
    const workers: SystemWorker[] = [];
    const worker = async () => {
      const w = await SystemWorker.start(SCRIPT, server.spec);
      workers.push(w);
      return w;
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `qlsys-test-${name}-`));
      server = await start(dir);
    }, 90_000);

    afterAll(async () => {
      await Promise.all(workers.map((w) => w.kill()));
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('two processes on one lock never hold it at once', async () => {
      const file = join(dir, 'same.log');
      const [a, b] = await Promise.all([worker(), worker()]);
      await Promise.all([a, b].map((w) => w.send({ op: 'exclusive', name: 'shared', rounds: ROUNDS, holdMs: 2, file })));
      const check = checkExclusion(file);
      expect(check.overlaps).toEqual([]);
      expect(check.sections).toBe(2 * ROUNDS);
    }, 60_000);

    it('control: on two different locks the same check sees them overlap', async () => {
      const file = join(dir, 'different.log');
      const [a, b] = await Promise.all([worker(), worker()]);
      await Promise.all([a.send({ op: 'exclusive', name: 'one', rounds: ROUNDS, holdMs: 2, file }), b.send({ op: 'exclusive', name: 'other', rounds: ROUNDS, holdMs: 2, file })]);
      expect(checkExclusion(file).overlaps.length).toBeGreaterThan(0);
    }, 60_000);

    it('a holder killed with -9 lets the next waiter in, and not before', async () => {
      const [holder, next] = await Promise.all([worker(), worker()]);
      await holder.send({ op: 'hold', name: 'killed' });
      let taken = false;
      const took = next.send({ op: 'take', name: 'killed' }).then(() => (taken = true));
      await sleep(500);
      expect(taken).toBe(false);
      await holder.kill();
      await took;
      expect(taken).toBe(true);
    }, 60_000);
  });
}

describe.skipIf(missingReason('postgres') !== undefined)('postgres pg_try_advisory_lock', () => {
  it('answers at once: undefined while another connection holds the lock, the lock once it is free', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'qlsys-test-pgtry-'));
    const server = await PostgresServer.start(dir);
    const system = await openPostgres(server.url);
    try {
      const [first, second] = [await system.holder(), await system.holder()];
      const held = await first.acquire('try');
      expect(await second.tryAcquire('try')).toBeUndefined();
      await held.release();
      const mine = await second.tryAcquire('try');
      expect(mine).toBeDefined();
      await mine!.release();
    } finally {
      await system.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
