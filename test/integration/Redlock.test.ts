import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { driftFor } from '../../src/clock/validity.js';
import {
  ErrorCode,
  InvalidArgumentError,
  LockExpiredError,
  LockHeldError,
  LockLostError,
  QuorumUnreachableError,
  Redlock,
  ValidityExhaustedError,
} from '../../src/index.js';
import { patient } from '../support/patient.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DEFAULT_DRIFT = { driftFactor: 0.01, driftMs: 2 };
/** For states the slowest nodes reach after a call resolved at quorum: generous, since CI machines are loaded. */
const POLL = { timeout: 10_000, interval: 20 };

/** A clock that moves `stepMs` forward at every read: elapsed time is exact. */
function steppingClock(stepMs: number) {
  let now = 1_000;
  return { now: () => (now += stepMs) };
}

async function valuesOn(clients: readonly Redis[], key: string): Promise<(string | null)[]> {
  return Promise.all(clients.map((client) => client.get(key)));
}

describe('Redlock on 5 nodes', () => {
  let nodes: LocalNodeSet;
  let clients: Redis[];

  beforeAll(async () => {
    nodes = await startNodes(5);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    for (let i = 0; i < 5; i++) if (!nodes.node(i).isRunning) await nodes.node(i).start();
    await nodes.flushAll();
    clients = nodes.clients();
  });
  afterEach(async () => {
    for (let i = 0; i < 5; i++) if (nodes.node(i).isPaused) await nodes.node(i).resume();
    for (const client of clients) client.disconnect();
  });

  it('acquires on every node with one random value and a quorum of 3', async () => {
    const redlock = new Redlock(clients, patient);
    expect(redlock.quorum).toBe(3);
    const lock = await redlock.acquire('orders:42', 10_000);
    // Granted at quorum: the slowest nodes' SETs may still be on their way.
    await expect.poll(() => valuesOn(clients, 'orders:42'), POLL).toEqual(Array(5).fill(lock.value));
    expect((await (await lock.release()).settled).released).toBe(5);
    expect(await valuesOn(clients, 'orders:42')).toEqual(Array(5).fill(null));
  });

  it('acquires with 2 of 5 nodes killed', async () => {
    await nodes.node(0).kill();
    await nodes.node(3).kill();
    const lock = await new Redlock(clients, { ...patient, acquireTimeoutMs: 0 }).acquire('two-down', 10_000);
    expect(await Promise.all([1, 2, 4].map((i) => clients[i]!.get('two-down')))).toEqual(Array(3).fill(lock.value));
    const result = await (await lock.release()).settled;
    expect(result).toMatchObject({ released: 3, nodes: 5 });
    expect(result.outcomes.filter((o) => o.status === 'error' || o.status === 'timeout')).toHaveLength(2);
  });

  it('fails clearly with 3 of 5 nodes killed, naming each node’s cause', async () => {
    await nodes.node(0).kill();
    await nodes.node(2).kill();
    await nodes.node(4).kill();
    const error = await new Redlock(clients, { ...patient, acquireTimeoutMs: 0 }).acquire('three-down', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    const unreachable = error as QuorumUnreachableError;
    expect(unreachable.code).toBe(ErrorCode.QUORUM_UNREACHABLE);
    expect(unreachable.quorum).toBe(3);
    expect(unreachable.outcomes.filter((o) => o.status === 'error' || o.status === 'timeout').length).toBeGreaterThanOrEqual(3);
    expect(unreachable.message).toMatch(/Not enough nodes reachable/);
    expect(await clients[1]!.exists('three-down')).toBe(0);
    expect(await clients[3]!.exists('three-down')).toBe(0);
  });

  it('counts a node holding a foreign value against the quorum, and leaves that value on release', async () => {
    await clients[0]!.set('shared', 'foreign', 'PX', 10_000);
    await clients[1]!.set('shared', 'foreign', 'PX', 10_000);
    const redlock = new Redlock(clients, { ...patient, acquireTimeoutMs: 0 });
    const lock = await redlock.acquire('shared', 10_000);
    await lock.release();
    expect(await valuesOn(clients, 'shared')).toEqual(['foreign', 'foreign', null, null, null]);

    await clients[2]!.set('shared', 'foreign', 'PX', 10_000);
    const error = await redlock.acquire('shared', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as LockHeldError).heldOnNodes).toBe(3);
    expect(await valuesOn(clients, 'shared')).toEqual(['foreign', 'foreign', 'foreign', null, null]);
  });

  it('releases on all nodes after a partial acquire, leaving no key of its value anywhere', async () => {
    await clients[1]!.set('partial', 'foreign', 'PX', 10_000);
    await clients[3]!.set('partial', 'foreign', 'PX', 10_000);
    await clients[4]!.set('partial', 'foreign', 'PX', 10_000);
    await expect(new Redlock(clients, { ...patient, acquireTimeoutMs: 0 }).acquire('partial', 10_000)).rejects.toBeInstanceOf(LockHeldError);
    expect(await valuesOn(clients, 'partial')).toEqual([null, 'foreign', null, 'foreign', 'foreign']);
  });

  it('does not let a node paused with SIGSTOP stall acquire beyond the node timeout', async () => {
    await nodes.node(2).pause();
    // The point is paused vs live: a paused node never answers, however long it is given, while a live one
    // must never miss its timeout here. patient's 1 s is the suite's margin for a live node on a loaded
    // 2-core machine (100 ms was missed by a live node under load); a hang would show as the test's own timeout.
    const redlock = new Redlock(clients, { ...patient, acquireTimeoutMs: 0 });
    const lock = await redlock.acquire('paused', 10_000);
    const result = await (await lock.release()).settled;
    expect(result.outcomes.find((o) => o.node.endsWith(`:${nodes.endpoints[2]!.port}`))?.status).toBe('timeout');
    expect(result.released).toBe(4);
  });

  it('fails fast with 3 nodes paused: each times out instead of hanging', async () => {
    await nodes.node(0).pause();
    await nodes.node(1).pause();
    await nodes.node(2).pause();
    // As above: patient's 1 s tells a paused node from a live one under load; a hang would be the test's timeout.
    const error = await new Redlock(clients, { ...patient, acquireTimeoutMs: 0 })
      .acquire('three-paused', 10_000)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    expect((error as QuorumUnreachableError).outcomes.filter((o) => o.status === 'timeout')).toHaveLength(3);
  });

  it('grants validity = ttl - elapsed - drift, counted from a read before the first request', async () => {
    const ttl = 10_000;
    const reads: number[] = [];
    const clock = steppingClock(40);
    const redlock = new Redlock(clients, { ...patient, clock: { now: () => reads[reads.push(clock.now()) - 1]! } });
    const lock = await redlock.acquire('validity', ttl);
    const startedAt = lock.validUntil - (ttl - driftFor(ttl, DEFAULT_DRIFT));
    expect(reads).toContain(startedAt);
    // The start is read before the replies come in, so the claimed validity
    // has already shrunk by the round trips when the lock is handed over.
    expect(startedAt).toBeLessThan(reads[reads.length - 1]!);
    expect(lock.remainingMs()).toBeLessThan(ttl - driftFor(ttl, DEFAULT_DRIFT));
    await lock.release();
  });

  it('refuses a lock whose validity the round trips used up, and releases it everywhere', async () => {
    // Connected first: on a clock that jumps 6 s at every read, any wait for
    // a first connection would look as if it had run out. Through a locker,
    // so that the connections it uses are the ones made (QUORUMLOCK_TEST_CLIENT).
    await new Redlock(clients, patient).inspect('too-slow');
    const redlock = new Redlock(clients, { ...patient, clock: steppingClock(6_000), acquireTimeoutMs: 0 });
    const error = await redlock.acquire('too-slow', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidityExhaustedError);
    expect(await valuesOn(clients, 'too-slow')).toEqual(Array(5).fill(null));
  });

  it('extends on a quorum, counting validity from the extend’s own start', async () => {
    const redlock = new Redlock(clients, patient);
    const lock = await redlock.acquire('extend', 1_000);
    await lock.extend(30_000);
    expect(lock.remainingMs()).toBeGreaterThan(1_000);
    expect(lock.remainingMs()).toBeLessThanOrEqual(30_000 - driftFor(30_000, DEFAULT_DRIFT));
    // Extended at quorum: the slowest nodes follow.
    await expect.poll(async () => (await Promise.all(clients.map((c) => c.pttl('extend')))).every((ms) => ms > 1_000), POLL).toBe(true);
    await lock.release();
  });

  it('loses the lock on extend once a quorum of keys is gone, without touching the others', async () => {
    const lock = await new Redlock(clients, patient).acquire('lost', 10_000);
    await expect.poll(() => valuesOn(clients, 'lost'), POLL).toEqual(Array(5).fill(lock.value));
    for (const i of [0, 1, 2]) await clients[i]!.set('lost', 'someone-else', 'PX', 10_000);
    await expect(lock.extend(10_000)).rejects.toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(await valuesOn(clients, 'lost')).toEqual(['someone-else', 'someone-else', 'someone-else', lock.value, lock.value]);
  });

  it('fails to extend after expiry', async () => {
    const lock = await new Redlock(clients, patient).acquire('expired', 50);
    await sleep(100);
    await expect(lock.extend(10_000)).rejects.toBeInstanceOf(LockExpiredError);
  });

  it('locks several resources on every node, all or none', async () => {
    await clients[4]!.set('b', 'foreign', 'PX', 10_000);
    const redlock = new Redlock(clients, patient);
    const lock = await redlock.acquire(['a', 'b'], 10_000);
    await expect.poll(() => valuesOn(clients, 'a'), POLL).toEqual([lock.value, lock.value, lock.value, lock.value, null]);
    expect(await valuesOn(clients, 'b')).toEqual([lock.value, lock.value, lock.value, lock.value, 'foreign']);
    await (await lock.release()).settled;
    expect(await valuesOn(clients, 'a')).toEqual(Array(5).fill(null));
  });

  it('using() keeps the lock across several TTLs and aborts when a quorum of keys is deleted', async () => {
    const redlock = new Redlock(clients, patient);
    // A 1 s TTL renewed at half its validity outlasts a 500 ms stall of this process or a node;
    // with 400 ms a 200 ms stall at load 7 (run 5 of 20 under load) lost the lock, as it should.
    // Held means what the design promises: the signal never aborted, and a quorum holds our value.
    const outcome = await redlock.using('job', 1_000, async (signal, lock) => {
      await sleep(3_500);
      const holding = (await valuesOn(clients, 'job')).filter((v) => v === lock.value).length;
      const heldThroughout = !signal.aborted && holding >= redlock.quorum;
      for (const i of [0, 2, 4]) await clients[i]!.del('job');
      // A renewal may find the keys gone while the deletions are still being sent.
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return { heldThroughout, reason: signal.reason as unknown };
    });
    expect(outcome.heldThroughout).toBe(true);
    expect(outcome.reason).toBeInstanceOf(LockLostError);
    // using() returns once the release is decided; the last nodes follow.
    await expect.poll(() => valuesOn(clients, 'job'), POLL).toEqual(Array(5).fill(null));
  });

  it('rejects a client given twice, and an empty client list', () => {
    expect(() => new Redlock([clients[0]!, clients[1]!, clients[0]!])).toThrow(/clients\[2\]/);
    expect(() => new Redlock([], patient)).toThrow(InvalidArgumentError);
    expect(() => new Redlock([clients[0]!, 'x' as never])).toThrow(/clients\[1\]/);
    // eslint-disable-next-line no-sparse-arrays
    expect(() => new Redlock([clients[0]!, , clients[2]!] as never)).toThrow(/clients\[1\]/);
  });
});

describe('Redlock with an even number of nodes', () => {
  let nodes: LocalNodeSet;
  beforeAll(async () => {
    nodes = await startNodes(4);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });

  it('returns on a 2–2 split instead of hanging', async () => {
    const clients = nodes.clients();
    await clients[0]!.set('split', 'foreign', 'PX', 10_000);
    await clients[1]!.set('split', 'foreign', 'PX', 10_000);
    const redlock = new Redlock(clients, { ...patient, acquireTimeoutMs: 0 });
    expect(redlock.quorum).toBe(3);
    const error = await redlock.acquire('split', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect(await Promise.all(clients.map((c) => c.get('split')))).toEqual(['foreign', 'foreign', null, null]);
  });
});

describe('Redlock on 3 nodes', () => {
  let nodes: LocalNodeSet;
  beforeAll(async () => {
    nodes = await startNodes(3);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });

  it('gives mutual exclusion between two coordinators, and survives one node down', async () => {
    const a = new Redlock(nodes.clients(), { ...patient, acquireTimeoutMs: 0 });
    const b = new Redlock(nodes.clients(), { ...patient, acquireTimeoutMs: 0 });
    const lock = await a.acquire('res', 10_000);
    expect(await b.tryAcquire('res', 10_000)).toBeNull();
    // Every node's release, not only a quorum's: with node 1 killed next, b
    // needs both others free. A release decided on nodes 0 and 1 may still be
    // on its way to node 2; on fresh nodes it even goes there twice (EVALSHA,
    // then EVAL after NOSCRIPT), so b's attempt, sent meanwhile on the same
    // connection, can run between the two and find the key held: most likely
    // what loaded run 14 of 1ce2565 saw ("held elsewhere on 1 node(s)").
    await (await lock.release()).settled;
    await nodes.node(1).kill();
    const next = await b.acquire('res', 10_000);
    expect(await a.tryAcquire('res', 10_000)).toBeNull();
    await next.release();
  });
});
