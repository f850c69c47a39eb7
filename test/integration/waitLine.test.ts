/**
 * The wait lines kept in Redis, across processes: first come first served,
 * a released key handed to the first live waiter, and what a dead or paused
 * waiter can cost the others: at most the lease plus one backoff delay
 * (about a second by default), however many died. Bounds are asserted with
 * slack for a busy 2-core machine; speed is not.
 */
import type { Redis } from 'ioredis';
import { patient } from '../support/patient.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisLock, Redlock } from '../../src/index.js';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { HANDOFF_CHANNEL_PREFIX } from '../../src/scripts/release.js';
import { PROCESS_TAG } from '../../src/shared/randomValue.js';
import { RESERVATION_MS } from '../../src/scripts/line.js';
import { holderValue } from '../../src/scripts/waiterMark.js';
import { LEASE_MS, LinePosition } from '../../src/wakeup/LinePosition.js';
import { RedisNodeBackend } from '../../src/node/RedisNodeBackend.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { killChildren, startChild } from '../support/childFixture.js';

/** Holders that wait for child processes to line up: it must outlast their start on a loaded machine (several seconds each). */
const HOLDER_TTL_MS = 120_000;

/** What a dead waiter may cost by design (lease + the default largest backoff), and slack for a loaded machine. */
const BOUND_MS = LEASE_MS + 400;
const SLACK_MS = 1_500;

async function lineOf(client: Redis, resource: string): Promise<string[]> {
  return client.zrange(lineKeysFor(resource)[0], 0, -1);
}

async function lineLength(clients: readonly Redis[], resource: string, length: number): Promise<void> {
  await expect
    .poll(async () => (await Promise.all(clients.map((c) => lineOf(c, resource)))).every((line) => line.length >= length), {
      timeout: 20_000,
      interval: 20,
    })
    .toBe(true);
}

describe('wait lines across processes', () => {
  let nodes: LocalNodeSet;
  beforeAll(async () => {
    nodes = await startNodes(5);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    await nodes.flushAll();
  });
  afterEach(() => {
    killChildren();
  });

  it('a waiter process killed -9 in line holds up the next one no longer than the lease and one backoff', async () => {
    const [client] = nodes.clients() as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const locker = new RedisLock(client);
    const holder = await locker.acquire('dead-head', HOLDER_TTL_MS);
    const { child } = startChild('lineWaiter', [port, 'dead-head']);
    await lineLength([client], 'dead-head', 1);
    const next = locker.acquire('dead-head', 10_000, { acquireTimeoutMs: 60_000 });
    await lineLength([client], 'dead-head', 2);
    child.kill('SIGKILL');
    const releasedAt = performance.now();
    await holder.release();
    const lock = await next;
    const waited = performance.now() - releasedAt;
    expect(waited).toBeLessThan(BOUND_MS + SLACK_MS);
    await lock.release();
  }, 60_000);

  it('50 waiters killed at once still cost no more than the bound', async () => {
    const [client] = nodes.clients() as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const locker = new RedisLock(client);
    const holder = await locker.acquire('crowd', HOLDER_TTL_MS);
    const crowds = Array.from({ length: 5 }, () => startChild('lineCrowd', [port, 'crowd', '10']));
    await Promise.all(crowds.map((crowd) => crowd.said('in line')));
    const next = locker.acquire('crowd', 10_000, { acquireTimeoutMs: 60_000 });
    await lineLength([client], 'crowd', 51);
    for (const { child } of crowds) child.kill('SIGKILL');
    const releasedAt = performance.now();
    await holder.release();
    const lock = await next;
    expect(performance.now() - releasedAt).toBeLessThan(BOUND_MS + SLACK_MS);
    // Pruning took every dead place at once.
    expect(await lineOf(client, 'crowd')).toEqual([]);
    await lock.release();
  }, 60_000);

  it('a handoff to a paused waiter is reclaimed, and the waiter takes its turn after it resumes', async () => {
    const [client] = nodes.clients() as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const locker = new RedisLock(client);
    const holder = await locker.acquire('paused', HOLDER_TTL_MS);
    const paused = startChild('lineWaiter', [port, 'paused']);
    await lineLength([client], 'paused', 1);
    const [pausedValue] = await lineOf(client, 'paused');
    const next = locker.acquire('paused', 10_000, { acquireTimeoutMs: 60_000 });
    await lineLength([client], 'paused', 2);
    paused.child.kill('SIGSTOP');
    try {
      const releasedAt = performance.now();
      await holder.release();
      // The key went to the paused waiter first, as a reservation (marked,
      // maybe, by the next waiter's attempt: it waits behind it).
      expect(holderValue((await client.get('paused')) ?? '')).toBe(pausedValue);
      const lock = await next;
      expect(performance.now() - releasedAt).toBeLessThan(BOUND_MS + SLACK_MS);
      await lock.release();
    } finally {
      paused.child.kill('SIGCONT');
    }
    await paused.said('acquired paused');
  }, 60_000);

  it('an aborted waiter leaves the line at once, and one that timed out too', async () => {
    const [client] = nodes.clients() as [Redis];
    // At the 50 ms default node timeout, a test process descheduled while an attempt was out counts it as
    // timed out (the expired timer fires before the reply is read): the 300 ms acquire below then fails as
    // unreachable, not as held. 1 s is the suite's margin for a live node (test/support/patient.ts).
    const locker = new RedisLock(client, patient);
    const holder = await locker.acquire('leaving', 10_000);
    const controller = new AbortController();
    const aborted = locker.acquire('leaving', 10_000, { signal: controller.signal, acquireTimeoutMs: 60_000 });
    await lineLength([client], 'leaving', 1);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'QUORUMLOCK_ABORTED' });
    // Well before its lease would have run out.
    await expect.poll(() => lineOf(client, 'leaving'), { timeout: LEASE_MS / 2, interval: 10 }).toEqual([]);
    await expect(locker.acquire('leaving', 10_000, { acquireTimeoutMs: 300 })).rejects.toMatchObject({ code: 'QUORUMLOCK_LOCK_HELD' });
    await expect.poll(() => lineOf(client, 'leaving'), { timeout: LEASE_MS / 2, interval: 10 }).toEqual([]);
    await holder.release();
  }, 30_000);

  it('processes are served first come, first served, and no key is left without a TTL', async () => {
    const clients = nodes.clients().slice(0, 1);
    const [client] = clients as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const holder = await new RedisLock(client).acquire('fifo', HOLDER_TTL_MS);
    const waiters = [];
    for (let i = 0; i < 4; i++) {
      const waiter = startChild('lineWaiter', [port, 'fifo']);
      await lineLength(clients, 'fifo', i + 1);
      waiters.push(waiter);
    }
    const order = await lineOf(client, 'fifo');
    const taken: string[] = [];
    const watcher = client.duplicate();
    // Each handoff is announced to its waiter's process alone: 'value key' on its process's channel.
    await watcher.psubscribe(`${HANDOFF_CHANNEL_PREFIX}*`);
    watcher.on('pmessage', (_pattern: string, _channel: string, message: string) => taken.push(message.split(' ')[0] as string));
    await holder.release();
    await Promise.all(waiters.map((waiter) => waiter.said('acquired fifo')));
    expect(taken).toEqual(order);
    await watcher.quit();
    await expectEveryKeyToExpire(client);
  }, 60_000);

  it("announces a handoff to the waiter's process alone, not to every process with a waiter for the key", async () => {
    const [client] = nodes.clients() as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const holder = await new RedisLock(client).acquire('solo', HOLDER_TTL_MS);
    const first = startChild('lineWaiter', [port, 'solo']);
    await lineLength([client], 'solo', 1);
    const second = startChild('lineWaiter', [port, 'solo']);
    await lineLength([client], 'solo', 2);
    const [head, next] = (await lineOf(client, 'solo')) as [string, string];
    const processTag = (value: string) => value.slice(0, value.indexOf('.'));
    expect(processTag(head)).not.toBe(processTag(next));
    const heard: string[] = [];
    const watcher = client.duplicate();
    await watcher.psubscribe('quorumlock:*');
    watcher.on('pmessage', (_pattern: string, channel: string, message: string) => heard.push(`${channel} ${message}`));
    await holder.release();
    await Promise.all([first.said('acquired solo'), second.said('acquired solo')]);
    // '<value> <server µs> <reservation ms> <key>' on the process's channel, and nowhere else.
    const handoffTo = (value: string) => new RegExp(`^${HANDOFF_CHANNEL_PREFIX}${processTag(value)} ${value.replace('.', '\\.')} \\d+ ${RESERVATION_MS} solo$`);
    for (const value of [head, next]) {
      const messages = heard.filter((message) => message.includes(value));
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(handoffTo(value));
    }
    await watcher.quit();
    await expectEveryKeyToExpire(client);
  }, 60_000);

  it('uncontended calls pay nothing for the lines: SET NX, then a compare-and-delete that names no line key', async () => {
    const [client] = nodes.clients() as [Redis];
    const locker = new RedisLock(client);
    await (await locker.acquire('warmup', 10_000)).release();
    const calls = async () => {
      const stats = await client.info('commandstats');
      const count = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { set: count('set'), evalsha: count('evalsha'), get: count('get'), del: count('del'), exists: count('exists'), zadd: count('zadd') };
    };
    const before = await calls();
    for (let i = 0; i < 20; i++) await (await locker.acquire(`free:${i}`, 10_000)).release();
    const after = await calls();
    // Per cycle: the SET NX, and one script that GETs and DELs: 4 commands, as before the lines.
    expect({
      set: after.set - before.set,
      evalsha: after.evalsha - before.evalsha,
      get: after.get - before.get,
      del: after.del - before.del,
      exists: after.exists - before.exists,
      zadd: after.zadd - before.zadd,
    }).toEqual({ set: 20, evalsha: 20, get: 20, del: 20, exists: 0, zadd: 0 });
    // And the release names the resource alone: no line keys to send and parse.
    const monitor = await client.duplicate().monitor();
    const scripts: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'evalsha') scripts.push(args);
    });
    await (await locker.acquire('free:once', 10_000)).release();
    await expect.poll(() => scripts.length, { timeout: 5_000, interval: 10 }).toBe(1);
    monitor.disconnect();
    expect(scripts[0]?.slice(2, 4)).toEqual(['1', 'free:once']);
  });

  it('two waiters that reach two nodes in opposite orders stand in one order on both: one ticket per waiter', async () => {
    const clients = nodes.clients().slice(0, 2);
    const backends = clients.map((client) => new RedisNodeBackend(client));
    await Promise.all(clients.map((client) => client.set('split', 'holder', 'PX', 10_000)));
    const first = new LinePosition();
    const second = new LinePosition();
    const join = (node: RedisNodeBackend, value: string, position: LinePosition) =>
      node.acquireInLine(['split'], value, 10_000, false, { ticket: position.ticket, leaseMs: position.leaseMs });
    await join(backends[0]!, 'first', first);
    await join(backends[0]!, 'second', second);
    await join(backends[1]!, 'second', second);
    await join(backends[1]!, 'first', first);
    // Tickets handed out by each node put 'second' first on the second node,
    // and a release there would reserve the key for another waiter than here.
    for (const client of clients) expect(await lineOf(client, 'split')).toEqual(['first', 'second']);
  });

  /**
   * A round of our process that came from the Redis line as a handoff: its
   * first holder, and a waiter that was queued then (the lock passes to it).
   * `late` is queued after the lock came, for the next round.
   */
  async function handedRound(client: Redis, locker: RedisLock, resource: string, othersJoin: () => Promise<void>) {
    await client.set(resource, 'foreign', 'PX', HOLDER_TTL_MS);
    const first = locker.acquire(resource, 60_000);
    await lineLength([client], resource, 1);
    const second = locker.acquire(resource, 60_000);
    await othersJoin();
    // The foreign holder's release hands the key to our first waiter, first in line.
    expect(await new RedisNodeBackend(client).release([resource], 'foreign')).toBe(1);
    const handed = await first;
    const late = locker.acquire(resource, 60_000);
    await handed.release();
    const passed = await second;
    expect(passed.value).toBe(handed.value);
    return { passed, late };
  }

  it('a round handed over from the line ends by yielding to the next process in line: our next waiter sends no plain attempt that would fail', async () => {
    const [client] = nodes.clients() as [Redis];
    const port = String(nodes.endpoints[0]!.port);
    const locker = new RedisLock(client, patient);
    let otherAcquired: Promise<void> | undefined;
    const { passed, late } = await handedRound(client, locker, 'yield', async () => {
      const other = startChild('lineWaiter', [port, 'yield']);
      await lineLength([client], 'yield', 2);
      otherAcquired = other.said('acquired yield');
    });
    const handoffs: string[] = [];
    const watcher = client.duplicate();
    await watcher.psubscribe(`${HANDOFF_CHANNEL_PREFIX}*`);
    watcher.on('pmessage', (_pattern: string, _channel: string, message: string) => handoffs.push(message.split(' ')[0] as string));
    const monitor = await client.duplicate().monitor();
    const plainAttempts: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args[0]?.toLowerCase() === 'set' && args[1] === 'yield' && source !== 'lua') plainAttempts.push(args);
    });
    await passed.release();
    const next = await late;
    await otherAcquired;
    // The round's end went to the other process, first in line; ours joined the line behind it.
    expect(handoffs[0]?.startsWith(`${PROCESS_TAG}.`)).toBe(false);
    expect(plainAttempts).toEqual([]);
    await next.release();
    monitor.disconnect();
    await watcher.quit();
    await expectEveryKeyToExpire(client);
  }, 60_000);

  it('a round handed over from the line with nobody left in line: the next waiter takes the freed key when the release is announced, not after a backoff', async () => {
    const [client] = nodes.clients() as [Redis];
    // Backoffs drawn from up to a minute: only the announcement ends the wait in time, in three rounds out of three.
    const locker = new RedisLock(client, { ...patient, acquireTimeoutMs: 120_000, retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    for (const resource of ['freed:1', 'freed:2', 'freed:3']) {
      const { passed, late } = await handedRound(client, locker, resource, async () => undefined);
      const releasedAt = performance.now();
      await passed.release();
      const next = await late;
      expect(performance.now() - releasedAt).toBeLessThan(2_000);
      await next.release();
    }
  }, 60_000);

  it.each([3, 5])('Redlock: waiters of several processes on %i nodes, multi-resource locks among them, all get through', async (count) => {
    const clients = nodes.clients().slice(0, count);
    const ports = nodes.endpoints.slice(0, count).map((e) => e.port).join(',');
    const locker = new Redlock(clients);
    const holder = await locker.acquire(['r1', 'r2'], HOLDER_TTL_MS);
    const waiters = [];
    for (let i = 0; i < 4; i++) {
      const waiter = startChild('lineWaiter', [ports, i % 2 === 0 ? 'r1+r2' : 'r1', '2']);
      await lineLength(clients, 'r1', i + 1);
      waiters.push(waiter);
    }
    // Every node orders them alike: handoffs do not split the votes.
    const orders = await Promise.all(clients.map((c) => lineOf(c, 'r1')));
    for (const order of orders) expect(order).toEqual(orders[0]);
    await holder.release();
    await Promise.all(waiters.map((waiter, i) => waiter.said(`acquired ${i % 2 === 0 ? 'r1+r2' : 'r1'}`)));
    for (const c of clients) await expectEveryKeyToExpire(c);
  }, 90_000);
});

/** Every key on the node has a TTL (or is gone): nothing the lines wrote outlives them. */
async function expectEveryKeyToExpire(client: Redis): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const pttl = await client.pttl(key);
      expect(pttl === -2 || pttl > 0, `${key}: PTTL ${pttl}`).toBe(true);
    }
  } while (cursor !== '0');
}
