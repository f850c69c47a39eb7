/**
 * locker.close(): acquires turned away, locks released on every node,
 * renewals stopped, a second call harmless; on every primitive.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ErrorCode,
  type Lock,
  LockerClosedError,
  RedisLock,
  RedisReadWriteLock,
  RedisSemaphore,
  Redlock,
  RedlockReadWriteLock,
  RedlockSemaphore,
} from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';
import { keysHolding } from '../support/keysHolding.js';

let nodes: LocalNodeSet;

beforeAll(async () => {
  nodes = await startNodes(3);
});

afterAll(async () => {
  await nodes.stopAll();
});

beforeEach(async () => {
  await nodes.flushAll();
});

/** A primitive as close() sees it: how to hold, wait for, and take a lock of one resource. */
interface Primitive {
  readonly name: string;
  readonly nodeCount: number;
  make(clients: readonly Redis[]): Closable;
}

interface Closable {
  acquire(resource: string, ttlMs: number, options?: { acquireTimeoutMs?: number }): Promise<Lock>;
  using<T>(resource: string, ttlMs: number, routine: (signal: AbortSignal, lock: Lock) => Promise<T>): Promise<T>;
  close: RedisLock['close'];
}

const PRIMITIVES: readonly Primitive[] = [
  { name: 'RedisLock', nodeCount: 1, make: (c) => new RedisLock(c[0] as Redis, patient) },
  { name: 'Redlock', nodeCount: 3, make: (c) => new Redlock(c.slice(0, 3), patient) },
  { name: 'RedisSemaphore', nodeCount: 1, make: (c) => new RedisSemaphore(c[0] as Redis, { ...patient, limit: 1 }) },
  { name: 'RedlockSemaphore', nodeCount: 3, make: (c) => new RedlockSemaphore(c.slice(0, 3), { ...patient, limit: 1 }) },
  { name: 'RedisReadWriteLock (writer by hand, reader under using)', nodeCount: 1, make: (c) => readWrite(new RedisReadWriteLock(c[0] as Redis, patient)) },
  { name: 'RedlockReadWriteLock (writer by hand, reader under using)', nodeCount: 3, make: (c) => readWrite(new RedlockReadWriteLock(c.slice(0, 3), patient)) },
];

/** The writer's acquire, the reader's using(), the read-write lock's own close(). */
function readWrite(rw: RedisReadWriteLock | RedlockReadWriteLock): Closable {
  return {
    acquire: (resource, ttlMs, options) => rw.write.acquire(resource, ttlMs, options),
    using: (resource, ttlMs, routine) => rw.read.using(resource, ttlMs, routine),
    close: (options) => rw.close(options),
  };
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

describe.each(PRIMITIVES)('close() on $name', (primitive) => {
  it('releases the locks held by hand and under using() on every node, aborts the routine with LockerClosedError, and turns new acquires away', async () => {
    const clients = nodes.clients().slice(0, primitive.nodeCount);
    const locker = primitive.make(clients);
    const byHand = await locker.acquire('close:hand', 60_000);
    let underUsing: Lock | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const routine = locker.using('close:using', 60_000, async (signal, lock) => {
      underUsing = lock;
      started();
      await aborted(signal);
      return signal.reason as unknown;
    });
    await running;
    const values = [byHand.value, (underUsing as Lock).value];
    // An acquire returns at a quorum: the last node's write may land a moment later.
    for (const client of clients) await vi.waitFor(async () => expect(await keysHolding(client, values)).not.toEqual([]));

    const closing = locker.close();
    expect(locker.close()).toBe(closing);
    const summary = await closing;
    expect(summary).toEqual({ released: 2, failed: 0, leftToExpire: 0, rejected: 0, timedOut: false });
    // Settled means every node answered: nothing is left to poll for.
    for (const client of clients) expect(await keysHolding(client, values)).toEqual([]);
    expect(await routine).toBeInstanceOf(LockerClosedError);
    expect(byHand.signal.reason).toBeInstanceOf(LockerClosedError);
    await expect(byHand.extend(60_000)).rejects.toBeInstanceOf(LockerClosedError);
    await expect(locker.acquire('close:after', 1000)).rejects.toMatchObject({ code: ErrorCode.LOCKER_CLOSED });
    // The clients are the caller's: still open.
    for (const client of clients) expect(await client.ping()).toBe('PONG');
  });

  it('rejects a waiting acquire with LockerClosedError and counts it', async () => {
    const clients = nodes.clients().slice(0, primitive.nodeCount);
    const holder = primitive.make(clients);
    const held = await holder.acquire('close:contended', 60_000);
    const locker = primitive.make(clients);
    const waiting = locker.acquire('close:contended', 60_000, { acquireTimeoutMs: 60_000 }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const summary = await locker.close();
    expect(await waiting).toBeInstanceOf(LockerClosedError);
    expect(summary).toMatchObject({ released: 0, rejected: 1, timedOut: false });
    await held.release();
    await holder.close();
  });
});

describe('close() racing an acquire being granted', () => {
  it.each([
    ['RedisLock', (c: readonly Redis[]) => new RedisLock(c[0] as Redis, patient), 1],
    ['Redlock', (c: readonly Redis[]) => new Redlock(c.slice(0, 3), patient), 3],
  ] as const)('%s: the lock granted after close() began is released too, before close() resolves', async (_name, make, nodeCount) => {
    const clients = nodes.clients().slice(0, nodeCount);
    const locker = make(clients);
    // Connected first: a request still waiting for its connection would be dropped by close(), not granted.
    await Promise.all(clients.map((client) => client.ping()));
    // Sent now; its replies come after close() has begun.
    const acquiring = locker.acquire('close:race', 60_000).catch((error: unknown) => error);
    const trying = locker.tryAcquire('close:race:try', 60_000).catch((error: unknown) => error);
    const summary = await locker.close();
    expect(await acquiring).toBeInstanceOf(LockerClosedError);
    expect(await trying).toBeInstanceOf(LockerClosedError);
    expect(summary).toMatchObject({ rejected: 2, failed: 0, leftToExpire: 0, timedOut: false });
    expect(summary.released).toBe(2);
    for (const client of clients) expect(await client.exists('close:race', 'close:race:try')).toBe(0);
  });
});

describe('close() and await using', () => {
  it('await using a locker closes it at the end of the block', async () => {
    const clients = nodes.clients().slice(0, 3);
    let lock: Lock | undefined;
    {
      await using locker = new Redlock(clients, patient);
      lock = await locker.acquire('close:dispose', 60_000);
    }
    expect(lock.signal.reason).toBeInstanceOf(LockerClosedError);
    for (const client of clients) expect(await client.exists('close:dispose')).toBe(0);
  });

  it('rejects a bad timeoutMs, and resolves with timedOut when the releases outlast it', async () => {
    const clients = nodes.clients().slice(0, 1);
    const locker = new RedisLock(clients[0] as Redis, patient);
    await expect(locker.close({ timeoutMs: -1 })).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT, argument: 'options.timeoutMs' });
    const lock = await locker.acquire('close:timeout', 60_000);
    await nodes.node(0).pause();
    try {
      const summary = await locker.close({ timeoutMs: 0 });
      expect(summary).toMatchObject({ released: 0, leftToExpire: 1, timedOut: true });
      expect(lock.signal.reason).toBeInstanceOf(LockerClosedError);
    } finally {
      await nodes.node(0).resume();
    }
  });
});
