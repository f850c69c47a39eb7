import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InvalidArgumentError,
  LimitMismatchError,
  LockHeldError,
  type Lock,
  QuorumUnreachableError,
  RedisSemaphore,
  RedlockSemaphore,
} from '../../src/index.js';
import { limitKey, slotKey } from '../../src/semaphore/permitKeys.js';
import { semaphoreTakeScript } from '../../src/scripts/semaphore.js';
import { lineAndLeaseFor } from '../../src/scripts/lineKeys.js';
import { lockerClientOf } from '../support/clientSwap.js';
import { patient } from '../support/patient.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const once = { ...patient, acquireTimeoutMs: 0 };

/**
 * Runs `hook` with the key of every SET the locker's client sends, once its
 * answer is in and before the locker sees it: the client the locker talks
 * through (lockerClientOf), ioredis's `set` or node-redis's `sendCommand`.
 */
function afterEachSet(lockerClient: unknown, hook: (key: string) => void): void {
  type Send = (...args: unknown[]) => Promise<unknown>;
  const target = lockerClient as Record<string, Send>;
  // ioredis clients have a status string; node-redis sends everything raw.
  const name = typeof (lockerClient as { status?: unknown }).status === 'string' ? 'set' : 'sendCommand';
  const real = (target[name] as Send).bind(lockerClient);
  target[name] = (...args) => {
    const command = name === 'set' ? ['SET', ...args] : (args.find(Array.isArray) as unknown[]);
    return real(...args).then((reply) => {
      if (String(command[0]).toUpperCase() === 'SET') hook(String(command[1]));
      return reply;
    });
  };
}

/** How many times the node ran `command` since its stats were reset, from INFO commandstats. */
function callsOf(stats: string, command: string): number {
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/** How many of the resource's permit slots hold a value on this node. */
async function heldSlots(client: Redis, resource: string, limit: number): Promise<number> {
  const values = await Promise.all(Array.from({ length: limit }, (_, slot) => client.get(slotKey(resource, slot))));
  return values.filter((value) => value !== null).length;
}

describe('RedisSemaphore on one node', () => {
  let nodes: LocalNodeSet;
  let client: Redis;

  beforeAll(async () => {
    nodes = await startNodes(1);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    await nodes.flushAll();
    client = nodes.clients()[0]!;
  });
  afterEach(() => {
    client.disconnect();
  });

  it('grants up to limit permits, then refuses the next until one is released', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 3 });
    const held = await Promise.all([1, 2, 3].map(() => semaphore.acquire('api', 10_000)));
    expect(new Set(held.map((lock) => lock.resources[1])).size).toBe(3);
    expect(await heldSlots(client, 'api', 3)).toBe(3);
    expect(await semaphore.tryAcquire('api', 10_000)).toBeNull();
    await expect(semaphore.acquire('api', 10_000)).rejects.toBeInstanceOf(LockHeldError);
    await held[1]!.release();
    const next = await semaphore.tryAcquire('api', 10_000);
    expect(next).not.toBeNull();
    expect(next!.resources[1]).toBe(held[1]!.resources[1]);
    for (const lock of [held[0]!, held[2]!, next!]) await lock.release();
    expect(await heldSlots(client, 'api', 3)).toBe(0);
  });

  it('a holder of several permits takes that many slots, all or none', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 4 });
    const big = await semaphore.acquire('pool', 10_000, { permits: 3 });
    expect(big.resources).toHaveLength(4);
    expect(await semaphore.tryAcquire('pool', 10_000, { permits: 2 })).toBeNull();
    // The refused attempt wrote nothing: one slot is still free.
    expect(await heldSlots(client, 'pool', 4)).toBe(3);
    const small = await semaphore.acquire('pool', 10_000);
    await Promise.all([big.release(), small.release()]);
  });

  it('an attempt on a full semaphore stops after one take: two requests, not one per slot', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 8 });
    const held = await Promise.all(Array.from({ length: 8 }, () => semaphore.acquire('full', 10_000)));
    const admin = nodes.clients()[0]!;
    await admin.config('RESETSTAT');
    expect(await semaphore.tryAcquire('full', 10_000)).toBeNull();
    const stats = await admin.info('commandstats');
    admin.disconnect();
    // The first try (a bare SET NX: the limit record is known to outlive it), then one take
    // that finds no slot free and writes nothing; one try per slot would be 8 requests.
    expect(callsOf(stats, 'evalsha')).toBe(1);
    expect(callsOf(stats, 'set')).toBe(1);
    // A take goes to the slot that is free, wherever it is in the order.
    await held[3]!.release();
    const next = await semaphore.tryAcquire('full', 10_000);
    expect(next?.resources[1]).toBe(held[3]!.resources[1]);
    await Promise.all([...held, next!].map((lock) => lock.release()));
  });

  it('a take chooses the caller\'s reservations first, then free slots in its order, all or none', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 3 });
    const take = (value: string, order: number[], permits: number) =>
      client.evalsha(semaphoreTakeScript.sha, 1 + order.length, limitKey('p'), ...order.map((slot) => slotKey('p', slot)), value, 10_000, 3, permits);
    const a = await semaphore.acquire('p', 10_000);
    const heldSlot = Number(a.resources[1]!.split(':').pop());
    const others = [0, 1, 2].filter((slot) => slot !== heldSlot);
    // The held slot named first: the node takes the first free one after it (its position among the keys).
    const [ok, , chosen] = (await take('v', [heldSlot, ...others], 1)) as number[];
    expect(ok).toBe(1);
    expect(chosen).toBe(3);
    expect(await client.get(slotKey('p', others[0]!))).toBe('v');
    // Two wanted, one free: nothing written.
    expect(await take('w', [heldSlot, ...others], 2)).toBe(2);
    expect(await client.get(slotKey('p', others[1]!))).toBeNull();
    // A slot holding the caller's value (a release's reservation) comes before a free one earlier in the order.
    await client.set(slotKey('p', others[1]!), 'w', 'PX', 600);
    const [, , reserved] = (await take('w', [others[0]!, heldSlot, others[1]!], 1)) as number[];
    expect(reserved).toBe(4);
    expect(await client.pttl(slotKey('p', others[1]!))).toBeGreaterThan(9_000);
    await a.release();
    await client.del(slotKey('p', others[0]!), slotKey('p', others[1]!));
  });

  it('a release hands the freed slot to the next waiter in line as a reservation nobody else takes, for a reservation\'s length', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 1 });
    const held = await semaphore.acquire('handed', 10_000);
    // A waiter of another client stands in the line: its take from the line finds no slot free.
    const waiter = 'feed.waiter';
    const [line, lease] = lineAndLeaseFor(limitKey('handed'));
    const stood = await client.evalsha(semaphoreTakeScript.sha, 4, limitKey('handed'), slotKey('handed', 0), line, lease, waiter, 10_000, 1, 1, 'line', 600, 1);
    expect(stood).toEqual([-1, expect.any(Number)]);
    await held.release();
    expect(await client.get(slotKey('handed', 0))).toBe(`${waiter}~`);
    expect(await client.zscore(line, waiter)).toBeNull();
    // Reserved: another caller's acquire finds it held, whatever path it takes.
    expect(await semaphore.tryAcquire('handed', 10_000)).toBeNull();
    // The waiter's next take is granted it.
    const [taken] = (await client.evalsha(semaphoreTakeScript.sha, 4, limitKey('handed'), slotKey('handed', 0), line, lease, waiter, 10_000, 1, 1, 'line', 600, 1)) as number[];
    expect(taken).toBe(1);
    expect(await client.get(slotKey('handed', 0))).toBe(waiter);
    await client.del(slotKey('handed', 0));
  });

  it('a reservation nobody takes frees the slot after its length (a waiter that died)', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 1 });
    const held = await semaphore.acquire('dead', 10_000);
    const [line, lease] = lineAndLeaseFor(limitKey('dead'));
    await client.evalsha(semaphoreTakeScript.sha, 4, limitKey('dead'), slotKey('dead', 0), line, lease, 'gone.waiter', 10_000, 1, 1, 'line', 600, 1);
    await held.release();
    expect(await client.pttl(slotKey('dead', 0))).toBeLessThanOrEqual(600);
    await sleep(650);
    const next = await semaphore.tryAcquire('dead', 10_000);
    expect(next).not.toBeNull();
    await next!.release();
  });

  it('a released permit passes to a waiter of this process that has not asked the node yet, value, slot and all', async () => {
    const semaphore = new RedisSemaphore(client, { ...patient, acquireTimeoutMs: 10_000, retry: { retries: 100, baseDelayMs: 5, maxDelayMs: 2_000 }, limit: 1 });
    const first = await semaphore.acquire('passed', 10_000);
    // The second waits in the node's line; the third, arriving behind it, waits for a holder of ours.
    const second = semaphore.acquire('passed', 10_000);
    await sleep(100);
    const third = semaphore.acquire('passed', 10_000);
    await sleep(5);
    // Nobody waited when the first came from the node: its release goes through it, handed to the second.
    expect((await first.release()).released).toBe(1);
    const handed = await second;
    // The third waited when the second's came: it passes to the third, the node not asked.
    expect((await handed.release()).released).toBe(0);
    const passed = await third;
    expect(passed.value).toBe(handed.value);
    expect(passed.resources).toEqual(handed.resources);
    expect(await client.get(passed.resources[1]!)).toBe(handed.value);
    // Passed once (as many times as waiters were waiting): the next release goes through the node.
    expect((await passed.release()).released).toBe(1);
  });

  it('keeps every key on a TTL by the server, the limit record at least as long as the slots', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 2 });
    const lock = await semaphore.acquire('ttl', 5_000);
    const slot = lock.resources[1]!;
    expect(await client.pttl(slot)).toBeGreaterThan(4_000);
    await lock.extend(20_000);
    // One MULTI, so both are read at the same server instant.
    const replies = (await client.multi().pttl(slot).pttl(limitKey('ttl')).exec()) ?? [];
    const [slotTtl, limitTtl] = replies.map(([, ttl]) => Number(ttl)) as [number, number];
    expect(slotTtl).toBeGreaterThan(19_000);
    expect(limitTtl).toBeGreaterThanOrEqual(slotTtl);
    await lock.release();
    // Released: the slot is gone; the limit record expires by itself.
    expect(await client.exists(slot)).toBe(0);
    expect(await client.pttl(limitKey('ttl'))).toBeGreaterThan(0);
  });

  it("an expired holder's permit comes back without a release", async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 1 });
    const crashed = await semaphore.acquire('lease', 200);
    expect(await semaphore.tryAcquire('lease', 10_000)).toBeNull();
    await sleep(300);
    const next = await semaphore.tryAcquire('lease', 10_000);
    expect(next).not.toBeNull();
    // The expired holder's release leaves the new holder's permit alone.
    expect((await crashed.release()).released).toBe(0);
    expect(await heldSlots(client, 'lease', 1)).toBe(1);
    await next!.release();
  });

  it('refuses a limit other than the one the resource holds, with LimitMismatchError', async () => {
    const two = new RedisSemaphore(client, { ...once, limit: 2 });
    const three = new RedisSemaphore(client, { ...once, limit: 3 });
    const lock = await two.acquire('jobs', 10_000);
    const error = await three.acquire('jobs', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitMismatchError);
    expect(error).toMatchObject({ code: ErrorCode.LIMIT_MISMATCH, expected: 3, found: 2, resource: 'jobs' });
    await lock.release();
  });

  it('takes a permit with a bare SET NX while the limit record is known to outlive it, and reads the record again after', async () => {
    // Node timeout 1 s, TTL 3 s: the first acquire writes the record for 6 s; a slot sent
    // within ~1.9 s of it fits under the record with its answer's time and drift counted.
    const two = new RedisSemaphore(client, { ...once, limit: 2 });
    const admin = nodes.clients()[0]!;
    await (await two.acquire('fast', 3_000)).release();
    await admin.config('RESETSTAT');
    const second = await two.acquire('fast', 3_000);
    const stats = await admin.info('commandstats');
    expect(callsOf(stats, 'set')).toBe(1);
    expect(callsOf(stats, 'evalsha')).toBe(0);
    expect(await client.get(second.resources[1]!)).toBe(second.value);
    await second.release();
    // Once the record is gone, another limit may write its own; our next acquire must read it.
    await sleep(6_100);
    expect(await client.exists(limitKey('fast'))).toBe(0);
    const three = new RedisSemaphore(client, { ...once, limit: 3 });
    const other = await three.acquire('fast', 10_000);
    await expect(two.acquire('fast', 3_000)).rejects.toBeInstanceOf(LimitMismatchError);
    admin.disconnect();
    await other.release();
  });

  it('a bare SET answered too late for the record it counted on gives its slot back, and the attempt goes on', async () => {
    // The process's clock jumps 59 s while the second acquire's bare SET is out (a stall):
    // the record, written for 120 s by the first acquire, no longer covers a 60 s slot.
    let offset = 0;
    const clock = { now: () => performance.now() + offset };
    const semaphore = new RedisSemaphore(client, { ...once, limit: 2, clock });
    await (await semaphore.acquire('late', 60_000)).release();
    const stalled: string[] = [];
    afterEachSet(lockerClientOf(client), (key) => {
      stalled.push(key);
      offset += 59_000;
    });
    const lock = await semaphore.acquire('late', 60_000);
    expect(stalled).toHaveLength(1);
    // The bare SET's slot was given back; the take (a script, which reads the record again) took
    // the first free slot of the order, which may be that one again, now with its record.
    expect(await client.get(lock.resources[1]!)).toBe(lock.value);
    expect(await client.pttl(limitKey('late'))).toBeGreaterThan(60_000);
    expect(await heldSlots(client, 'late', 2)).toBe(1);
    await lock.release();
  });

  it('extend fails once another holder took the slot, and never extends it', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 1 });
    const first = await semaphore.acquire('steal', 10_000);
    // As if the node had lost the key and another holder had taken the slot since.
    await client.set(first.resources[1]!, 'another holder', 'PX', 10_000);
    await expect(first.extend(20_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_LOST });
    expect(await client.get(first.resources[1]!)).toBe('another holder');
    expect(await client.pttl(first.resources[1]!)).toBeLessThanOrEqual(10_000);
  });

  it('using() holds a permit while the routine runs and extends it', async () => {
    const semaphore = new RedisSemaphore(client, { ...once, limit: 1 });
    // Twice and more the TTL: only the auto-extension keeps the permit.
    const seen = await semaphore.using('work', 1_000, async (_signal, lock) => {
      await sleep(2_500);
      return client.get(lock.resources[1]!).then((value) => value === lock.value);
    });
    expect(seen).toBe(true);
    expect(await heldSlots(client, 'work', 1)).toBe(0);
  });

  it('names bad arguments', async () => {
    expect(() => new RedisSemaphore(client, undefined as never)).toThrow(/options.limit/);
    expect(() => new RedisSemaphore(client, { limit: 0 })).toThrow(InvalidArgumentError);
    expect(() => new RedisSemaphore(client, { limit: 2, fencing: true as never })).toThrow(/options.fencing/);
    const semaphore = new RedisSemaphore(client, { limit: 2 });
    await expect(semaphore.acquire('x', 1_000, { permits: 3 })).rejects.toThrow(/options.permits/);
  });
});

describe('RedlockSemaphore on 5 nodes', () => {
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
  afterEach(() => {
    for (const client of clients) client.disconnect();
  });

  it('never grants more than limit permits to racing acquirers, and releases on every node', async () => {
    const semaphore = new RedlockSemaphore(clients, { ...once, limit: 2 });
    const results = await Promise.all(Array.from({ length: 8 }, () => semaphore.tryAcquire('race', 10_000)));
    const held = results.filter((lock): lock is Lock => lock !== null);
    expect(held.length).toBeGreaterThanOrEqual(1);
    expect(held.length).toBeLessThanOrEqual(2);
    for (const lock of held) expect((await (await lock.release()).settled).released).toBe(5);
    for (const client of clients) expect(await heldSlots(client, 'race', 2)).toBe(0);
  });

  it('acquires with 2 of 5 nodes killed, and says the quorum is unreachable with 3', async () => {
    const semaphore = new RedlockSemaphore(clients, { ...once, limit: 3 });
    await nodes.node(0).kill();
    await nodes.node(3).kill();
    const lock = await semaphore.acquire('down', 10_000);
    await lock.release();
    await nodes.node(4).kill();
    await expect(semaphore.acquire('down', 10_000)).rejects.toBeInstanceOf(QuorumUnreachableError);
  });

  it('a limit mismatch on a majority is refused', async () => {
    const lock = await new RedlockSemaphore(clients, { ...once, limit: 2 }).acquire('mixed', 10_000);
    await expect(new RedlockSemaphore(clients, { ...once, limit: 4 }).acquire('mixed', 10_000)).rejects.toBeInstanceOf(LimitMismatchError);
    await lock.release();
  });
});
