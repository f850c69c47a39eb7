/**
 * The semaphore's and the read-write lock's holders renew in batches, as the
 * mutex's do (renewals.test.ts): one script call per node for the renewals
 * that fall due together (renewEach.lua around the primitive's own extend
 * script; the writers' keys are mutex keys, renewed by extendMany.lua), each
 * holder decided on its own.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ExtendEvent } from '../../src/diagnostics/channels.js';
import { type Lock, LockLostError, RedlockReadWriteLock, RedlockSemaphore } from '../../src/index.js';
import type { LockedRoutine } from '../../src/lock/Locker.js';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { extendManyScript } from '../../src/scripts/index.js';
import { rwReadExtendEachScript } from '../../src/scripts/readWrite.js';
import { semaphoreExtendEachScript } from '../../src/scripts/semaphore.js';
import { slotKey } from '../../src/semaphore/permitKeys.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { expectBatchTimeoutCountsAgainstAll } from '../support/batchTimeout.js';
import { scriptCalls } from '../support/lockRequests.js';
import { patient } from '../support/patient.js';
import { recordChannel } from '../support/recordChannel.js';

const LIMIT = 2;
const TTL_MS = 3_000;

type Using = (resource: string, ttlMs: number, routine: LockedRoutine<void>) => Promise<void>;

/** Holds one lock per resource under using() at once; `end()` ends every routine. */
async function holdAll(using: Using, resources: readonly string[]) {
  let end: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const locks: Lock[] = [];
  const routines: Promise<void>[] = [];
  const held = resources.map(
    (resource, i) =>
      new Promise<void>((taken, failed) => {
        const routine = using(resource, TTL_MS, async (_signal, lock) => {
          locks[i] = lock;
          taken();
          await ended;
        });
        routines.push(routine);
        routine.catch(failed);
      }),
  );
  await Promise.all(held);
  return { locks, stop: () => (end(), Promise.all(routines)) };
}

/** Until `count` extend events of these resources were seen; then the events. */
async function extendsOf(prefix: string, count: number, during: () => Promise<void> = async () => undefined) {
  const recorded = recordChannel<ExtendEvent>('quorumlock:extend');
  const ours = () => recorded.events.filter((event) => event.resources.some((resource) => resource.includes(prefix)));
  try {
    await during();
    // The first renewal is due at half the validity (1.5 s), 0.37 s early at the most.
    await expect.poll(() => ours().length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
    return ours();
  } finally {
    recorded.stop();
  }
}

function expectLostExactly(locks: readonly Lock[], lost: ReadonlySet<number>): void {
  locks.forEach((lock, i) => {
    if (lost.has(i)) {
      expect(lock.signal.aborted, `holder ${i}`).toBe(true);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    } else {
      expect(lock.signal.aborted, `holder ${i}`).toBe(false);
      expect(lock.remainingMs()).toBeGreaterThan(TTL_MS / 2);
    }
  });
}

describe('semaphore and read-write lock holders renew in batches', () => {
  let nodes: LocalNodeSet;
  let clients: Redis[];

  beforeAll(async () => {
    nodes = await startNodes(3);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    await nodes.flushAll();
    clients = nodes.clients();
    // Loaded up front, so that a batch is one EVALSHA, not an EVALSHA answered NOSCRIPT and an EVAL.
    for (const script of [semaphoreExtendEachScript, rwReadExtendEachScript, extendManyScript]) {
      await Promise.all(clients.map((client) => client.script('LOAD', script.source)));
    }
  });
  afterEach(async () => {
    for (let i = 0; i < 3; i++) if (nodes.node(i).isPaused) await nodes.node(i).resume();
    for (const client of clients) client.disconnect();
  });

  it('a batch of permits in which some were lost aborts exactly those signals, in one request per node', async () => {
    const semaphore = new RedlockSemaphore(clients, { ...patient, limit: LIMIT });
    const resources = Array.from({ length: 20 }, (_, i) => `sem-batch:${i}`);
    const { locks, stop } = await holdAll((resource, ttlMs, routine) => semaphore.using(resource, ttlMs, routine), resources);
    const lost = new Set([1, 6, 13, 19]);
    // Gone from two of three nodes (whichever slot the holder took): a quorum no longer holds these permits.
    for (const i of lost) {
      for (const client of clients.slice(0, 2)) await client.del(...Array.from({ length: LIMIT }, (_, slot) => slotKey(`sem-batch:${i}`, slot)));
    }
    const before = await scriptCalls(clients);
    await extendsOf('sem-batch:', 20);
    const after = await scriptCalls(clients);
    // Acquired within a few ms, their renewals fall due together: one script call per node (20 without batches).
    expect(after.map((n, i) => n - (before[i] as number))).toEqual([1, 1, 1]);
    expectLostExactly(locks, lost);
    await stop();
  });

  it('readers and writers in a batch in which some were lost: exactly those signals abort, one request per node for each side', async () => {
    const rw = new RedlockReadWriteLock(clients, patient);
    const readResources = Array.from({ length: 10 }, (_, i) => `rw-batch-read:${i}`);
    const writeResources = Array.from({ length: 10 }, (_, i) => `rw-batch-write:${i}`);
    const readers = await holdAll((resource, ttlMs, routine) => rw.read.using(resource, ttlMs, routine), readResources);
    const writers = await holdAll((resource, ttlMs, routine) => rw.write.using(resource, ttlMs, routine), writeResources);
    const lostReaders = new Set([0, 4, 9]);
    const lostWriters = new Set([2, 7]);
    for (const client of clients.slice(0, 2)) {
      for (const i of lostReaders) await client.zrem(readWriteKeys(readResources[i] as string)[1], (readers.locks[i] as Lock).value);
      for (const i of lostWriters) await client.del(readWriteKeys(writeResources[i] as string)[0]);
    }
    const before = await scriptCalls(clients);
    await extendsOf('rw-batch-', 20);
    const after = await scriptCalls(clients);
    // The readers' batch (rwReadExtendEach) and the writers' (extendMany): two calls per node, not 20.
    expect(after.map((n, i) => n - (before[i] as number))).toEqual([2, 2, 2]);
    expectLostExactly(readers.locks, lostReaders);
    expectLostExactly(writers.locks, lostWriters);
    await readers.stop();
    await writers.stop();
  });

  it('a node that times out during a batch of permits counts against every permit of the batch', async () => {
    const semaphore = new RedlockSemaphore(clients, { nodeTimeoutMs: 300, limit: LIMIT });
    const resources = Array.from({ length: 10 }, (_, i) => `sem-timeout:${i}`);
    const { locks, stop } = await holdAll((resource, ttlMs, routine) => semaphore.using(resource, ttlMs, routine), resources);
    await expectBatchTimeoutCountsAgainstAll(nodes, 'sem-timeout:', 10);
    for (const lock of locks) expect(lock.signal.aborted).toBe(false);
    await stop();
  });
});
