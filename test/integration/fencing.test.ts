import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, RedisLock, Redlock } from '../../src/index.js';
import { fencingKeyFor } from '../../src/scripts/fencingKey.js';
import { patient } from '../support/patient.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

describe('fencing tokens on one node', () => {
  let nodes: LocalNodeSet;
  let redis: Redis;
  beforeAll(async () => {
    nodes = await startNodes(1);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    if (!nodes.node(0).isRunning) await nodes.node(0).start();
    await nodes.flushAll();
    [redis] = nodes.clients() as [Redis];
  });

  it('strictly increase across successive holders', async () => {
    const locker = new RedisLock(redis, { ...patient, fencing: true });
    const tokens: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const lock = await locker.acquire('account:7', 10_000);
      expect(typeof lock.fencingToken).toBe('bigint');
      tokens.push(lock.fencingToken!);
      await lock.release();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
  });

  it('keep increasing after the node restarts empty, through the server-time floor', async () => {
    const locker = new RedisLock(redis, { ...patient, fencing: true });
    const before = await locker.acquire('account:8', 10_000);
    await before.release();
    await nodes.node(0).restart({ empty: true });
    expect(await redis.exists(fencingKeyFor('account:8'))).toBe(0);
    const after = await locker.acquire('account:8', 10_000);
    expect(after.fencingToken! > before.fencingToken!).toBe(true);
    await after.release();
  });

  it('hands out one token per resource of a multi-resource lock', async () => {
    await redis.set(fencingKeyFor('b'), String(4n * 10n ** 15n));
    const lock = await new RedisLock(redis, { ...patient, fencing: true }).acquire(['a', 'b'], 10_000);
    expect(lock.fencingTokens).toHaveLength(2);
    expect(lock.fencingTokens![1]).toBe(4n * 10n ** 15n + 1n);
    expect(lock.fencingToken).toBe(lock.fencingTokens![0]);
    await lock.release();
  });

  it('are absent without the option', async () => {
    const lock = await new RedisLock(redis, patient).acquire('plain', 10_000);
    expect(lock.fencingToken).toBeUndefined();
    expect(await redis.exists(fencingKeyFor('plain'))).toBe(0);
    await lock.release();
  });

  it('rejects a fencing option that is not a boolean', () => {
    expect(() => new RedisLock(redis, { ...patient, fencing: 'yes' as never })).toThrow(InvalidArgumentError);
  });
});

describe('fencing tokens on Redlock', () => {
  let nodes: LocalNodeSet;
  let clients: Redis[];
  beforeAll(async () => {
    nodes = await startNodes(5);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    await nodes.flushAll();
    clients = nodes.clients();
  });

  it('takes the largest token of the quorum and writes it back to a quorum before returning', async () => {
    const ahead = 4n * 10n ** 15n;
    await clients[4]!.set(fencingKeyFor('ledger'), String(ahead));
    const redlock = new Redlock(clients, { ...patient, fencing: true });
    const lock = await redlock.acquire('ledger', 10_000);
    const counters = await Promise.all(clients.map(async (c) => BigInt((await c.get(fencingKeyFor('ledger'))) ?? '0')));
    const atLeastToken = counters.filter((counter) => counter >= lock.fencingToken!);
    expect(atLeastToken.length).toBeGreaterThanOrEqual(redlock.quorum);
    await lock.release();
    const next = await redlock.acquire('ledger', 10_000);
    expect(next.fencingToken! > lock.fencingToken!).toBe(true);
    await next.release();
  });

  it('never goes backwards when the holder of the largest counter is cut off next time', async () => {
    const redlock = new Redlock(clients, { ...patient, fencing: true });
    await clients[0]!.set(fencingKeyFor('orders'), String(4n * 10n ** 15n));
    const first = await redlock.acquire('orders', 10_000);
    await first.release();
    // The node that had the largest counter is now down; the written-back
    // token on a quorum must still win.
    await nodes.node(0).kill();
    const second = await redlock.acquire('orders', 10_000, { acquireTimeoutMs: 0 });
    expect(second.fencingToken! > first.fencingToken!).toBe(true);
    await second.release();
    await nodes.node(0).start();
  });
});

describe('fencing counter keys', () => {
  it('share the resource’s hash slot on a Redis Cluster', async () => {
    const { default: slot } = await import('cluster-key-slot');
    for (const resource of ['orders:42', '{user:1}:cart', 'x}{y}', 'plain{', '{']) {
      expect(slot(fencingKeyFor(resource)), resource).toBe(slot(resource));
    }
  });
});
