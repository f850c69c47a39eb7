/**
 * Every primitive on the in-memory node (quorumlock/testing), with no Redis
 * server: what users' own tests rely on. The scripts' semantics are checked
 * against redis-server by test/property/luaNode.test.ts; here, that the
 * lockers reach the node through the adapter contract and get what a real
 * node gives, that its faults act as planned, and that what it cannot serve
 * is refused when a locker is built.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  isQuorumLockError,
  RedisLock,
  RedisReadWriteLock,
  RedisSemaphore,
  Redlock,
  RedlockSemaphore,
} from '../../src/index.js';
import { IN_MEMORY_NODE, type InMemoryBackend } from '../../src/node/NodeBackend.js';
import { SERVED_COMMANDS } from '../../src/testing/keyspace/Keyspace.js';
import { InMemoryNode } from '../../src/testing/index.js';
import { FakeClock } from '../support/FakeClock.js';

beforeAll(() => InMemoryNode.ready());

describe('every primitive on in-memory nodes', () => {
  it('RedisLock: acquire, refuse a second holder, extend, inspect, release', async () => {
    const node = new InMemoryNode('n1');
    const locker = new RedisLock(node);
    const lock = await locker.acquire('orders:42', 10_000);
    expect(await locker.tryAcquire('orders:42', 10_000)).toBeNull();
    expect(node.get('orders:42')).toBe(lock.value);
    await lock.extend(20_000);
    expect(node.pttl('orders:42')).toBeGreaterThan(10_000);
    const inspection = await locker.inspect('orders:42');
    expect(inspection.resources[0]).toMatchObject({ state: 'held', holder: lock.value });
    expect((await lock.release()).released).toBe(1);
    expect(node.get('orders:42')).toBeUndefined();
  });

  it('keys expire on the injected clock', async () => {
    const clock = new FakeClock(0);
    const node = new InMemoryNode('n1', clock);
    const locker = new RedisLock(node, { clock });
    const lock = await locker.acquire(['a', 'b'], 1000);
    clock.advance(1000);
    expect(lock.remainingMs()).toBe(0);
    expect(node.get('a')).toBeUndefined();
    expect(await locker.tryAcquire('a', 1000)).not.toBeNull();
  });

  it('fencing tokens grow from lock to lock', async () => {
    const locker = new RedisLock(new InMemoryNode('n1'), { fencing: true });
    const first = await locker.acquire('f', 5000);
    await first.release();
    const second = await locker.acquire('f', 5000);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken as bigint);
    await second.release();
  });

  it('reenter() by value: another process joins a lock it was handed the value of, and leaves the keys to their holder', async () => {
    const node = new InMemoryNode('n1');
    const held = await new RedisLock(node).acquire('job', 5000);
    const joined = await new RedisLock(node).reenter('job', held.value);
    expect(joined.value).toBe(held.value);
    await joined.release();
    expect(node.get('job')).toBe(held.value);
    await held.release();
    await expect(new RedisLock(node).reenter('job', held.value)).rejects.toSatisfy((error) => isQuorumLockError(error, ErrorCode.LOCK_LOST));
  });

  it('a waiter stands in the wait line and is woken by the release, well before its backoff', async () => {
    const node = new InMemoryNode('n1');
    const locker = new RedisLock(node);
    const first = await locker.acquire('w', 30_000);
    const waiting = locker.acquire('w', 30_000, { acquireTimeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    setTimeout(() => void first.release(), 20);
    const started = performance.now();
    const second = await waiting;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(node.get('w')).toBe(second.value);
    await second.release();
  });

  it('Redlock over 5 nodes with one down grants on the other four', async () => {
    const nodes = [1, 2, 3, 4, 5].map((n) => new InMemoryNode(`n${n}`));
    (nodes[0] as InMemoryNode).restart({ downForMs: 60_000 });
    const redlock = new Redlock(nodes);
    const held = await redlock.acquire('cron', 30_000);
    expect(nodes.filter((node) => node.get('cron') === held.value)).toHaveLength(4);
    await expect(redlock.acquire('cron', 30_000, { acquireTimeoutMs: 0 })).rejects.toSatisfy((error) => isQuorumLockError(error, ErrorCode.LOCK_HELD));
    await held.release();
  });

  it('semaphores, on one node and over three', async () => {
    const semaphore = new RedisSemaphore(new InMemoryNode('s1'), { limit: 2 });
    const a = await semaphore.acquire('x', 5000, { acquireTimeoutMs: 3000 });
    const b = await semaphore.acquire('x', 5000, { acquireTimeoutMs: 3000 });
    expect(await semaphore.tryAcquire('x', 5000)).toBeNull();
    await a.release();
    const c = await semaphore.tryAcquire('x', 5000);
    expect(c).not.toBeNull();
    await b.release();
    await c?.release();
    const quorum = new RedlockSemaphore([1, 2, 3].map((n) => new InMemoryNode(`q${n}`)), { limit: 1 });
    const only = await quorum.acquire('y', 5000);
    expect(await quorum.tryAcquire('y', 5000)).toBeNull();
    await only.release();
  });

  it('read-write locks: readers share, a writer waits for them, then readers wait for it', async () => {
    const rw = new RedisReadWriteLock(new InMemoryNode('rw'));
    const r1 = await rw.read.acquire('doc', 5000);
    const r2 = await rw.read.acquire('doc', 5000);
    expect(await rw.write.tryAcquire('doc', 5000)).toBeNull();
    await r1.release();
    await r2.release();
    const writer = await rw.write.acquire('doc', 5000);
    expect(await rw.read.tryAcquire('doc', 5000)).toBeNull();
    await writer.release();
  });

  it('using() and await using', async () => {
    const node = new InMemoryNode('n1');
    const locker = new RedisLock(node);
    expect(await locker.using('u', 1000, async (_signal, lock) => node.get('u') === lock.value)).toBe(true);
    {
      await using lock = await locker.acquire('au', 1000);
      expect(node.get('au')).toBe(lock.value);
    }
    expect(node.get('au')).toBeUndefined();
  });

  it('auto-extension of many locks goes out in batches (extendMany), not one request per lock', async () => {
    const clock = new FakeClock(0);
    const node = new InMemoryNode('n1');
    const locker = new RedisLock(node);
    const inside = Array.from({ length: 20 }, (_, i) => locker.using(`batch:${i}`, 300, () => new Promise((resolve) => setTimeout(resolve, 400))));
    await Promise.all(inside);
    const batches = node.requests.filter((request) => request.op === 'extend' && request.values.length > 1);
    expect(batches.length).toBeGreaterThan(0);
    expect(clock.now()).toBe(0);
  });
});

describe('the fault planner', () => {
  it('a lost reply leaves the write applied, a failure before it does not, one after it does', async () => {
    for (const [fate, applied] of [
      ['lose-reply', true],
      ['fail-before', false],
      ['fail-after', true],
    ] as const) {
      const node = new InMemoryNode('n1', performance, () => ({ fate }));
      const locker = new RedisLock(node, { nodeTimeoutMs: 50, acquireTimeoutMs: 0 });
      await expect(locker.acquire('k', 60_000)).rejects.toSatisfy((error) => isQuorumLockError(error));
      expect(node.requests[0]?.changed?.some((change) => change.after !== undefined) ?? false, fate).toBe(applied);
    }
  });

  it('delays hold the reply, in sending order', async () => {
    let delay = 40;
    const node = new InMemoryNode('n1', performance, () => ({ replyAfterMs: (delay -= 20) + 20 }));
    const order: string[] = [];
    await Promise.all([node.command('SET', 'a', '1').then(() => order.push('first')), node.command('SET', 'b', '2').then(() => order.push('second'))]);
    expect(order).toEqual(['first', 'second']);
  });

  it('a restart empties the node, and down for a while refuses requests', async () => {
    const clock = new FakeClock(0);
    const node = new InMemoryNode('n1', clock);
    await node.command('SET', 'k', 'v');
    node.restart({ downForMs: 1000 });
    expect(node.get('k')).toBeUndefined();
    await expect(node.command('GET', 'k')).rejects.toThrow(/down after a restart/);
    clock.advance(1000);
    expect(await node.command('GET', 'k')).toBeNull();
  });
});

describe('refused when the locker is built', () => {
  it('syncReplicas: no replica is simulated', () => {
    expect(() => new RedisLock(new InMemoryNode('n1'), { syncReplicas: { replicas: 1 } })).toThrow(/cannot wait for its replicas/);
  });

  it('a semaphore or read-write lock on a node that cannot run scripts, at once rather than after retrying', () => {
    const mutexOnly: InMemoryBackend = {
      [IN_MEMORY_NODE]: true,
      name: 'mutex-only',
      acquire: () => Promise.resolve(true),
      extend: () => Promise.resolve(true),
      release: () => Promise.resolve(1),
    };
    expect(() => new RedisSemaphore(mutexOnly, { limit: 2 })).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, message: expect.stringMatching(/mutex-only cannot run scripts/) }));
    expect(() => new RedisReadWriteLock(mutexOnly)).toThrow(/mutex-only cannot run scripts/);
    expect(new RedisLock(mutexOnly)).toBeInstanceOf(RedisLock);
  });
});

it('serves every command the scripts send', () => {
  const scripts = new URL('../../src/scripts/', import.meta.url);
  const sent = new Set<string>();
  for (const file of readdirSync(scripts).filter((name) => name.endsWith('.lua'))) {
    for (const [, command] of readFileSync(new URL(file, scripts), 'utf8').matchAll(/redis\.p?call\('([A-Z]+)'/g)) sent.add(command as string);
  }
  assert.ok(sent.size > 10);
  expect([...sent].filter((command) => !SERVED_COMMANDS.includes(command))).toEqual([]);
});
