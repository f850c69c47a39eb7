import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExtendEvent } from '../../src/diagnostics/channels.js';
import { ErrorCode, InvalidArgumentError, type Lock, RedisLock, RedisReadWriteLock, RedisSemaphore } from '../../src/index.js';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { permitKeys } from '../../src/semaphore/permitKeys.js';
import { patient } from '../support/patient.js';
import { recordChannel } from '../support/recordChannel.js';
import { type RedisClusterSet, startCluster } from '../support/RedisClusterSet.js';

describe('RedisLock on a Redis Cluster client', () => {
  let cluster: RedisClusterSet;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(3);
    client = cluster.client();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('locks keys spread over the masters', async () => {
    const locker = new RedisLock(client, { ...patient, acquireTimeoutMs: 0 });
    for (const key of ['orders:1', 'orders:2', 'orders:3', 'stock:9']) {
      const lock = await locker.acquire(key, 10_000);
      expect(await client.get(key)).toBe(lock.value);
      expect(await locker.tryAcquire(key, 10_000)).toBeNull();
      expect((await lock.release()).released).toBe(1);
    }
  });

  it('locks several resources that share a hash tag', async () => {
    const lock = await new RedisLock(client, patient).acquire(['{order:42}:stock', '{order:42}:payment'], 10_000);
    expect(await client.get('{order:42}:payment')).toBe(lock.value);
    await lock.release();
  });

  it('refuses resources in different hash slots up front, naming the key that is off', async () => {
    const error = await new RedisLock(client, patient).acquire(['{order:42}:stock', 'order:43'], 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe('resources[1]');
    expect((error as Error).message).toMatch(/"order:43"/);
  });

  it('hands out fencing tokens with counters in the resource’s slot', async () => {
    const locker = new RedisLock(client, { ...patient, fencing: true });
    const first = await locker.acquire('ledger:7', 10_000);
    await first.release();
    const second = await locker.acquire('ledger:7', 10_000);
    expect(second.fencingToken! > first.fencingToken!).toBe(true);
    await second.release();
  });

  it('wakes a waiter on release through the cluster’s pub/sub', async () => {
    const holder = await new RedisLock(client, patient).acquire('wake:cluster', 10_000);
    const waiting = new RedisLock(client, { ...patient, 
      retry: { baseDelayMs: 1_000_000, maxDelayMs: 1_000_000 },
      acquireTimeoutMs: 600_000,
    }).acquire('wake:cluster', 10_000);
    // Until the waiter listens: cluster pub/sub reaches a subscriber on any master.
    const subscribers = async () => {
      const counts = await Promise.all(
        client.nodes('master').map(async (node) => Number(((await node.pubsub('NUMSUB', 'quorumlock:released:wake:cluster')) as [string, number])[1])),
      );
      return counts.reduce((a, b) => a + b, 0);
    };
    await expect.poll(subscribers, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(1);
    await holder.release();
    const lock = await waiting;
    expect(await client.get('wake:cluster')).toBe(lock.value);
    await lock.release();
  }, 15_000);

  it('names the cluster by its seed nodes in node outcomes', async () => {
    const lock = await new RedisLock(client, patient).acquire('named', 10_000);
    const { outcomes } = await lock.release();
    expect(outcomes[0]?.node).toBe(`cluster(${cluster.servers.map((s) => `${s.host}:${s.port}`).join(',')})`);
  });

  it('reports contention with the usual code', async () => {
    const lock = await new RedisLock(client, patient).acquire('busy:1', 10_000);
    await expect(new RedisLock(client, { ...patient, acquireTimeoutMs: 0 }).acquire('busy:1', 10_000)).rejects.toMatchObject({
      code: ErrorCode.LOCK_HELD,
    });
    await lock.release();
  });

  it('renews locks spread over many hash slots in batches (a script call per slot), and each keeps its keys', async () => {
    const locker = new RedisLock(client, patient);
    const keys = Array.from({ length: 30 }, (_, i) => `renew:${i}`);
    await whileHeldPastRenewal('renew:', 30, (hold) => keys.map((key) => locker.using(key, 3_000, hold)), async () => {
      for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(1_500);
    });
  }, 20_000);

  it('renews semaphore permits and readers spread over many hash slots in batches (a script call per slot), each keeping its keys', async () => {
    const semaphore = new RedisSemaphore(client, { ...patient, limit: 2 });
    const rw = new RedisReadWriteLock(client, patient);
    const resources = Array.from({ length: 15 }, (_, i) => `renew-each:${i}`);
    const start = (hold: Hold) => resources.flatMap((resource) => [semaphore.using(resource, 3_000, hold), rw.read.using(resource, 3_000, hold)]);
    await whileHeldPastRenewal('renew-each:', 30, start, async () => {
      for (const resource of resources) {
        const [, slot0, slot1] = permitKeys(resource, [0, 1]);
        expect(Math.max(await client.pttl(slot0 as string), await client.pttl(slot1 as string))).toBeGreaterThan(1_500);
        expect(await client.pttl(readWriteKeys(resource)[1])).toBeGreaterThan(1_500);
      }
    });
  }, 20_000);
});

type Hold = (signal: AbortSignal, lock: Lock) => Promise<void>;

/**
 * Runs the routines `start` makes with `hold`, which keeps each lock until
 * the end; once `count` renewals of resources named with `prefix` were seen
 * (renewed at half the validity, so past the first TTL only if every renewal
 * won), checks that all were granted and no lock was lost, and `checkKeys`.
 */
async function whileHeldPastRenewal(prefix: string, count: number, start: (hold: Hold) => Promise<void>[], checkKeys: () => Promise<void>): Promise<void> {
  const renewed = recordChannel<ExtendEvent>('quorumlock:extend');
  let release: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  const held: Lock[] = [];
  const routines = start(async (_signal, lock) => {
    held.push(lock);
    await done;
  });
  try {
    await expect.poll(() => renewed.events.filter((e) => e.resources.some((r) => r.includes(prefix))).length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
    expect(renewed.events.every((e) => e.granted)).toBe(true);
    await checkKeys();
    expect(held.every((lock) => !lock.signal.aborted)).toBe(true);
  } finally {
    renewed.stop();
    release();
    await Promise.all(routines);
  }
}
