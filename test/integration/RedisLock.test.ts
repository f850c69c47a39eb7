import { getEventListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InvalidArgumentError,
  LockExpiredError,
  LockLostError,
  type QuorumLockError,
  QuorumUnreachableError,
  RedisLock,
} from '../../src/index.js';
import { LuaScript, scriptResends } from '../../src/scripts/LuaScript.js';
import { holderValue } from '../../src/scripts/waiterMark.js';
import { patient } from '../support/patient.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
let redis: Redis;
let other: Redis;

beforeAll(async () => {
  nodes = await startNodes(1);
  [redis] = nodes.clients() as [Redis];
  [other] = nodes.clients() as [Redis];
});

afterAll(async () => {
  await nodes.stopAll();
});

beforeEach(async () => {
  await nodes.flushAll();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisLock', () => {
  it('gives mutual exclusion between two clients', async () => {
    const first = new RedisLock(redis, patient);
    const second = new RedisLock(other, { ...patient, acquireTimeoutMs: 0 });
    const lock = await first.acquire('orders:42', 10_000);
    await expect(second.acquire('orders:42', 10_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_HELD });
    await lock.release();
    const next = await second.acquire('orders:42', 10_000);
    expect(await redis.get('orders:42')).toBe(next.value);
    await next.release();
  });

  it('makes a waiting acquire succeed once the holder releases', async () => {
    const locker = new RedisLock(redis, patient);
    const lock = await locker.acquire('stock', 10_000);
    const waiting = new RedisLock(other, patient).acquire('stock', 10_000);
    await sleep(50);
    await lock.release();
    const next = await waiting;
    expect(await redis.get('stock')).toBe(next.value);
    await next.release();
  });

  it('tryAcquire returns null when the resource is held', async () => {
    const lock = await new RedisLock(redis, patient).acquire('cron:daily', 10_000);
    expect(await new RedisLock(other, patient).tryAcquire('cron:daily', 10_000)).toBeNull();
    await lock.release();
    const mine = await new RedisLock(other, patient).tryAcquire('cron:daily', 10_000);
    expect(mine).not.toBeNull();
    await mine?.release();
  });

  it('hands out a 128-bit random value and a validity below ttl - drift', async () => {
    const locker = new RedisLock(redis, patient);
    const lock = await locker.acquire('v', 10_000);
    expect(lock.value).toMatch(/^[0-9a-f]{8}\.[0-9a-f]{32}$/);
    expect(lock.remainingMs()).toBeGreaterThan(0);
    expect(lock.remainingMs()).toBeLessThanOrEqual(10_000 - 102);
    const pttl = await redis.pttl('v');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(10_000);
    await lock.release();
  });

  it('locks several resources all or none', async () => {
    const locker = new RedisLock(redis, { ...patient, acquireTimeoutMs: 0 });
    await redis.set('b', 'someone-else', 'PX', 10_000);
    await expect(locker.acquire(['a', 'b', 'c'], 10_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_HELD });
    expect(await redis.exists('a', 'c')).toBe(0);
    await redis.del('b');
    const lock = await locker.acquire(['a', 'b', 'c'], 10_000);
    expect(await redis.mget('a', 'b', 'c')).toEqual([lock.value, lock.value, lock.value]);
    const result = await lock.release();
    expect(result).toMatchObject({ released: 1, nodes: 1 });
    expect(await redis.exists('a', 'b', 'c')).toBe(0);
  });

  it('never deletes another holder’s key on release', async () => {
    const lock = await new RedisLock(redis, patient).acquire('shared', 10_000);
    await redis.set('shared', 'another-holder', 'PX', 10_000);
    const result = await lock.release();
    expect(result.released).toBe(0);
    expect(await redis.get('shared')).toBe('another-holder');
  });

  it('releasing an expired lock is not an error, and release is idempotent', async () => {
    const lock = await new RedisLock(redis, patient).acquire('short', 50);
    await sleep(120);
    expect(await redis.exists('short')).toBe(0);
    const first = await lock.release();
    expect(first).toMatchObject({ released: 0, nodes: 1 });
    expect(await lock.release()).toBe(first);
  });

  it('extends a held lock, and counts validity from the extend', async () => {
    const lock = await new RedisLock(redis, patient).acquire('ext', 1_000);
    await lock.extend(20_000);
    expect(lock.remainingMs()).toBeGreaterThan(1_000);
    expect(await redis.pttl('ext')).toBeGreaterThan(1_000);
    await lock.release();
  });

  it('fails to extend once the key is gone, and aborts the signal as lost', async () => {
    const lock = await new RedisLock(redis, patient).acquire('gone', 10_000);
    const signal = lock.signal;
    await redis.del('gone');
    await expect(lock.extend(10_000)).rejects.toBeInstanceOf(LockLostError);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
  });

  it('never extends another holder’s key', async () => {
    const lock = await new RedisLock(redis, patient).acquire('taken', 10_000);
    await redis.set('taken', 'another-holder', 'PX', 5_000);
    await expect(lock.extend(60_000)).rejects.toBeInstanceOf(LockLostError);
    expect(await redis.pttl('taken')).toBeLessThanOrEqual(5_000);
  });

  it('a failed extend to a shorter TTL shortens the lock’s own validity too', async () => {
    const lock = await new RedisLock(redis, patient).acquire('shrink', 10_000);
    // ttl 2 ms minus the drift allowance leaves no validity: the extend fails
    // (or its 2 ms node timeout runs out first on a busy machine), but the
    // node may already have taken the 2 ms TTL.
    const error = await lock.extend(2).catch((e: unknown) => e);
    expect([ErrorCode.VALIDITY_EXHAUSTED, ErrorCode.QUORUM_UNREACHABLE]).toContain((error as QuorumLockError).code);
    expect(lock.remainingMs()).toBe(0);
    // The key goes once the 2 ms TTL lands and runs out, not at the old 10 s.
    await expect.poll(() => redis.exists('shrink'), { timeout: 5_000, interval: 10 }).toBe(0);
    const next = await new RedisLock(other, patient).tryAcquire('shrink', 10_000);
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('an extend to a shorter TTL shortens the validity as it is sent, not when its reply comes', async () => {
    const lock = await new RedisLock(redis, patient).acquire('shrink-early', 10_000);
    // The node may apply the 500 ms TTL at once; a reply held up (here: not yet read) must
    // not leave the holder believing in the old 10 s meanwhile.
    const extended = lock.extend(500);
    expect(lock.remainingMs()).toBeLessThanOrEqual(500);
    await extended;
    expect(lock.remainingMs()).toBeLessThanOrEqual(500);
    await lock.release();
  });

  it('runs every script on a node that forgot them (SCRIPT FLUSH): resent in full after NOSCRIPT', async () => {
    const locker = new RedisLock(redis, { ...patient, fencing: true });
    const forget = () => redis.script('FLUSH');
    await forget();
    const lock = await locker.acquire(['flush:a', 'flush:b'], 10_000);
    expect(lock.fencingTokens).toHaveLength(2);
    await forget();
    await lock.extend(20_000);
    expect(await redis.pttl('flush:a')).toBeGreaterThan(10_000);
    await forget();
    expect((await lock.release()).released).toBe(1);
    expect(await redis.exists('flush:a', 'flush:b')).toBe(0);
  });

  it("counts a script resent after NOSCRIPT on its own client only: another connection's says nothing of this one's WAIT", async () => {
    const elsewhere = redis.duplicate();
    try {
      await redis.script('FLUSH');
      const before = [scriptResends(redis), scriptResends(elsewhere)];
      const read = (reply: unknown) => reply;
      await new LuaScript('one', 'return 1').run(elsewhere, [], [], read);
      expect([scriptResends(redis), scriptResends(elsewhere)]).toEqual([before[0], before[1]! + 1]);
      await new LuaScript('two', 'return 2').run(redis, [], [], read);
      expect([scriptResends(redis), scriptResends(elsewhere)]).toEqual([before[0]! + 1, before[1]! + 1]);
    } finally {
      elsewhere.disconnect();
    }
  });

  it('fails to extend an expired lock without a round trip', async () => {
    const lock = await new RedisLock(redis, patient).acquire('late', 30);
    await sleep(80);
    await expect(lock.extend(1_000)).rejects.toBeInstanceOf(LockExpiredError);
  });

  it('using() keeps the lock past its TTL while the routine runs', async () => {
    const locker = new RedisLock(redis, patient);
    // Renewed at half its validity, a lock outlives any stall shorter than about half its TTL: 2 s leaves
    // the suite's 1 s margin for a loaded machine (test/support/patient.ts; 500 ms expired once under load).
    // The routine runs past two TTLs, so it lives on renewals alone.
    const ttlMs = 2_000;
    const result = await locker.using('job', ttlMs, async (signal, lock) => {
      await sleep(2 * ttlMs + 500);
      return { aborted: signal.aborted, stored: await redis.get('job'), value: lock.value };
    });
    expect(result.aborted).toBe(false);
    expect(result.stored).toBe(result.value);
    expect(await redis.exists('job')).toBe(0);
  });

  it('using() aborts the signal of a routine that stalled its process past the lock’s end', async () => {
    const locker = new RedisLock(redis, patient);
    const reason = await locker.using('stalled', 300, async (signal) => {
      // Synchronously past the end: the renewal comes due late, on the one timer, and finds no validity left.
      const until = performance.now() + 500;
      while (performance.now() < until) {
        // busy: no turn of the event loop
      }
      const aborted = new Promise((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener('abort', resolve, { once: true })));
      await Promise.race([aborted, sleep(3_000)]);
      return signal.reason as unknown;
    });
    expect(reason).toBeInstanceOf(LockExpiredError);
  });

  it('using() aborts the routine’s signal when the key is deleted behind its back', async () => {
    const locker = new RedisLock(redis, patient);
    const reason = await locker.using('job2', 300, async (signal) => {
      await redis.del('job2');
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return signal.reason as unknown;
    });
    expect(reason).toBeInstanceOf(LockLostError);
  });

  it('using() rethrows the routine’s own error and releases the lock', async () => {
    const locker = new RedisLock(redis, patient);
    const failure = new Error('payment declined');
    await expect(
      locker.using('job3', 10_000, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await redis.exists('job3')).toBe(0);
  });

  it('rejects an aborted acquire with AbortedError and leaves no key behind', async () => {
    const holder = await new RedisLock(redis, patient).acquire('busy', 10_000);
    const controller = new AbortController();
    const waiting = new RedisLock(other, patient).acquire('busy', 10_000, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    await expect(waiting).rejects.toMatchObject({ code: ErrorCode.ABORTED });
    // The waiter may have marked the key for the release to be announced; the holder's value stays.
    expect(holderValue(await redis.get('busy') ?? '')).toBe(holder.value);
    await holder.release();
    expect(await redis.exists('busy')).toBe(0);
  });

  it('many waits given one signal put one listener on it, and its abort ends them all', async () => {
    const holder = await new RedisLock(redis, patient).acquire('shared-signal', 10_000);
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const locker = new RedisLock(other, patient);
      const waits = Array.from({ length: 20 }, (_, i) => locker.acquire(i % 2 === 0 ? 'shared-signal' : `shared-signal:${i}`, 10_000, { signal: controller.signal }));
      // Half of them hold their own keys at once; the others wait for the holder.
      const held = await Promise.all(waits.filter((_, i) => i % 2 === 1));
      await sleep(50);
      expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
      controller.abort(new Error('request ended'));
      const ended = await Promise.allSettled(waits.filter((_, i) => i % 2 === 0));
      expect(ended.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { code?: string }).code : 'held'))).toEqual(Array(10).fill(ErrorCode.ABORTED));
      await Promise.all(held.map((lock) => lock.release()));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await holder.release();
    }
  });

  describe('rejects bad input with a typed error naming the argument', () => {
    const locker = () => new RedisLock(redis, patient);
    const cases: [string, () => Promise<unknown>, string][] = [
      ['empty resources', () => locker().acquire([], 1000), 'resources'],
      ['a non-string resource', () => locker().acquire([1 as unknown as string], 1000), 'resources[0]'],
      ['ttl 0', () => locker().acquire('r', 0), 'ttlMs'],
      ['a negative ttl', () => locker().acquire('r', -5), 'ttlMs'],
      ['a NaN ttl', () => locker().acquire('r', Number.NaN), 'ttlMs'],
      ['a fractional ttl', () => locker().acquire('r', 10.5), 'ttlMs'],
      ['a huge ttl', () => locker().acquire('r', 2 ** 40), 'ttlMs'],
      ['tryAcquire with a bad ttl', () => locker().tryAcquire('r', -1), 'ttlMs'],
      ['using without a routine', () => locker().using('r', 1000, 'nope' as never), 'routine'],
      ['a bad acquire option', () => locker().acquire('r', 1000, { acquireTimeoutMs: -1 }), 'options.acquireTimeoutMs'],
      ['an unknown acquire option', () => locker().acquire('r', 1000, { retryCount: 3 } as never), 'options.retryCount'],
    ];
    it.each(cases)('%s', async (_, call, argument) => {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    });

    it('a bad client or bad locker options', () => {
      expect(() => new RedisLock({} as never)).toThrow(InvalidArgumentError);
      expect(() => new RedisLock(redis, { ...patient, driftFactor: 2 })).toThrow(/options\.driftFactor/);
      expect(() => new RedisLock(redis, { ...patient, nodeTimeoutMs: 0 })).toThrow(/options\.nodeTimeoutMs/);
    });

    it('a bad extend ttl', async () => {
      const lock = await locker().acquire('r', 1000);
      await expect(lock.extend(0)).rejects.toMatchObject({ argument: 'ttlMs' });
      await lock.release();
    });
  });

  it('fails within the node timeout when the node is dead, instead of hanging', async () => {
    const set = await startNodes(1);
    try {
      const [client] = set.clients({ maxRetriesPerRequest: null, enableOfflineQueue: true }) as [Redis];
      await client.ping();
      await set.node(0).pause();
      const locker = new RedisLock(client, { ...patient, nodeTimeoutMs: 100, acquireTimeoutMs: 0 });
      const error = await locker.acquire('dead', 10_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QuorumUnreachableError);
      expect((error as QuorumUnreachableError).outcomes[0]?.status).toBe('timeout');
      await set.node(0).kill();
      const afterKill = await locker.acquire('dead', 10_000).catch((e: unknown) => e);
      expect(afterKill).toBeInstanceOf(QuorumUnreachableError);
    } finally {
      await set.stopAll();
    }
  });
});
