/**
 * A handoff announced to a waiter is the lock itself (wakeup/handoffGrant.ts):
 * the waiter starts without a round trip of its own, with the reservation's
 * validity counted from its last attempt, and its claim of the full TTL
 * follows off the critical path.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AcquireEvent, type ExtendEvent, type Lock, RedisLock, Redlock } from '../../src/index.js';
import { RESERVATION_MS } from '../../src/scripts/line.js';
import { acquireInLine, acquireScript } from '../../src/scripts/acquire.js';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { release } from '../../src/scripts/release.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { recordChannel } from '../support/recordChannel.js';

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

async function inLine(clients: readonly Redis[], resource: string): Promise<void> {
  await expect
    .poll(async () => (await Promise.all(clients.map((c) => c.zcard(lineKeysFor(resource)[0])))).every((n) => n === 1), { timeout: 10_000, interval: 5 })
    .toBe(true);
}

/**
 * The holder is another process's, as far as the waiter can tell: its keys
 * are deleted by the release script itself (a release through a locker of
 * this process would also wake the waiter directly, and its own attempt would
 * then claim the key first).
 */
const recorders: { stop: () => void }[] = [];
afterEach(() => {
  for (const recorder of recorders.splice(0)) recorder.stop();
});

/**
 * For the tests that check what a claim does when it reaches the nodes. A
 * claim that times out (50 ms by default, shorter than this busy machine's
 * stalls) correctly leaves the lock the reservation; in one full-suite run
 * the Redlock claim did not upgrade the lock within 5 s, most likely so.
 */
const patient = { nodeTimeoutMs: 1_000 } as const;

async function handOff(make: () => RedisLock | Redlock, clients: readonly Redis[], resource: string, ttlMs: number) {
  const acquires = recordChannel<AcquireEvent>('quorumlock:acquire');
  const extends_ = recordChannel<ExtendEvent>('quorumlock:extend');
  recorders.push(acquires, extends_);
  const holder = await make().acquire(resource, 30_000);
  const waiting = make().acquire(resource, ttlMs, { acquireTimeoutMs: 10_000 });
  await inLine(clients, resource);
  await Promise.all(clients.map((client) => release(client, [resource], holder.value, 'marked')));
  const lock = await waiting;
  const taken = acquires.events.find((event) => event.granted && event.handedOff);
  return { lock, taken, acquires: acquires.events, claims: () => extends_.events.filter((event) => event.claim) };
}

async function expectClaimed(lock: Lock, clients: readonly Redis[], resource: string, ttlMs: number): Promise<void> {
  // The claim gives the keys the full TTL and validity counted from its own start, as an extend does.
  await expect.poll(() => lock.remainingMs() > RESERVATION_MS, { timeout: 5_000, interval: 5 }).toBe(true);
  expect(lock.ttlMs).toBe(ttlMs);
  const pttls = await Promise.all(clients.map((client) => client.pttl(resource)));
  // On a quorum at least (a node whose release came late may have handed the key over again after the claim).
  expect(pttls.filter((pttl) => pttl > RESERVATION_MS && pttl <= ttlMs).length).toBeGreaterThanOrEqual(Math.floor(clients.length / 2) + 1);
  // It left the line with the claim: nothing is kept there for it.
  const lineKeys = lineKeysFor(resource).slice(0, 2);
  await expect.poll(async () => (await Promise.all(clients.map((client) => client.exists(...lineKeys)))).every((n) => n === 0), { timeout: 5_000 }).toBe(true);
}

describe('a handoff taken as the lock', () => {
  it('RedisLock: the waiter starts on the handoff, valid for the reservation, then claims its TTL', async () => {
    const [client] = nodes.clients() as [Redis];
    const { lock, taken, claims } = await handOff(() => new RedisLock(client, patient), [client], 'handed', 5_000);
    expect(taken).toBeDefined();
    expect(taken?.validityMs).toBeGreaterThan(0);
    expect(taken?.validityMs).toBeLessThanOrEqual(RESERVATION_MS);
    expect(taken?.nodes.map((node) => node.status)).toEqual(['ok']);
    await expectClaimed(lock, [client], 'handed', 5_000);
    expect(claims()).toEqual([expect.objectContaining({ granted: true, claim: true, ttlMs: 5_000 })]);
    expect((await lock.release()).released).toBe(1);
    expect(await client.exists('handed')).toBe(0);
  });

  it('Redlock on 3 nodes: a quorum of handoffs is the lock', async () => {
    const clients = nodes.clients();
    // The waiter's attempt kept it in line; when that attempt was refused
    // before every node answered, its undo went to the last node too, and
    // under load may run there after the release. That undo takes the handoff
    // back and gives it straight back to the waiter, in line again; until
    // the second announcement arrives, the first one counts for nothing, and
    // a waiter woken by a quorum of announcements then may rightly take the
    // key with one more attempt (a few tries in a thousand on a loaded
    // machine; it failed a CI run). Such a try is made again (printed, at
    // most 5); a try whose attempt every node answered must take the handoff.
    for (let tryNumber = 1; ; tryNumber++) {
      await nodes.flushAll();
      const { lock, taken, acquires } = await handOff(() => new Redlock(clients, patient), clients, 'handed3', 5_000);
      const refusal = acquires.filter((event) => event.ttlMs === 5_000 && !event.granted).at(-1);
      const undoRaced = refusal !== undefined && refusal.nodes.length < clients.length;
      if (taken === undefined && undoRaced && tryNumber < 5) {
        console.log(`try ${tryNumber}: the waiter's undo raced the release (its attempt was decided on ${refusal.nodes.length} nodes); trying again`);
        await (await lock.release()).settled;
        continue;
      }
      expect(taken).toBeDefined();
      expect(taken?.nodes.filter((node) => node.status === 'ok').length).toBeGreaterThanOrEqual(2);
      await expectClaimed(lock, clients, 'handed3', 5_000);
      expect((await (await lock.release()).settled).released).toBe(3);
      return;
    }
  });

  it('a TTL shorter than the reservation bounds the handed lock: the claim will set the key to it', async () => {
    const [client] = nodes.clients() as [Redis];
    const { lock, taken } = await handOff(() => new RedisLock(client), [client], 'short', 200);
    expect(taken).toBeDefined();
    expect(taken?.validityMs).toBeLessThanOrEqual(200);
    await lock.release();
  });

  it('with fencing the waiter claims the key instead: each holder needs a token of its own', async () => {
    const [client] = nodes.clients() as [Redis];
    const { lock, taken, acquires } = await handOff(() => new RedisLock(client, { fencing: true }), [client], 'fenced', 5_000);
    expect(taken).toBeUndefined();
    expect(acquires.some((event) => event.granted && event.fencingToken !== undefined)).toBe(true);
    expect(lock.fencingToken).toBeDefined();
    await lock.release();
  });

  it('the claim goes out once the new holder runs, not on its way to it', async () => {
    const [client] = nodes.clients() as [Redis];
    const waiterClient = client.duplicate();
    try {
      // The claim is an in-line acquire on the waiter's own connection.
      let armed = false;
      let claimsBeforeResume = 0;
      let resumed = false;
      const evalsha = waiterClient.evalsha.bind(waiterClient) as (...args: unknown[]) => Promise<unknown>;
      (waiterClient as unknown as { evalsha: (...args: unknown[]) => Promise<unknown> }).evalsha = (...args) => {
        if (armed && !resumed && args[0] === acquireScript.sha) claimsBeforeResume++;
        return evalsha(...args);
      };
      const holder = await new RedisLock(client).acquire('late-claim', 30_000);
      const waiting = new RedisLock(waiterClient, patient).acquire('late-claim', 5_000, { acquireTimeoutMs: 10_000 });
      await inLine([client], 'late-claim');
      armed = true;
      await release(client, ['late-claim'], holder.value, 'marked');
      const lock = await waiting;
      resumed = true;
      expect(claimsBeforeResume).toBe(0);
      await expectClaimed(lock, [client], 'late-claim', 5_000);
      await lock.release();
    } finally {
      waiterClient.disconnect();
    }
  });

  it('a handed lock released at once sends its claim first: the released keys do not come back', async () => {
    const [client] = nodes.clients() as [Redis];
    const holder = await new RedisLock(client).acquire('quick', 30_000);
    const waiting = new RedisLock(client).acquire('quick', 5_000, { acquireTimeoutMs: 10_000 });
    await inLine([client], 'quick');
    await release(client, ['quick'], holder.value, 'marked');
    const lock = await waiting;
    expect(lock.pendingClaim).toBeDefined();
    // Released in the holder's first tick, before its claim was due.
    const released = await lock.release();
    expect(released.released).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await client.exists('quick')).toBe(0);
    expect(await client.exists(...lineKeysFor('quick').slice(0, 2))).toBe(0);
  });
});

describe('a handoff that the waiter’s own undo took back', () => {
  /**
   * Seen in chaos (wait-line-handoffs): a waiter's attempt was refused by a
   * quorum before a slower node answered, so its undo went to that node too.
   * There the attempt had put it in line, a release then handed it the key,
   * and the undo, running after both, took that reservation back and handed
   * it to the waiter ahead. The attempt's reply, arriving late, dated the
   * waiter's wait before the handoff, so the handoff counted: with a real one
   * from another node, the waiter held a lock another waiter held.
   *
   * Built here on 3 nodes: n0 answers in 2 × 60 ms, n2 in 2 × 150 ms, n1 at
   * once. The attempt is refused by n1 and n0 at 120 ms; its undo reaches n2
   * 120 ms after the attempt did. In between, the holder's release hands the
   * key to the waiter on n1 and n2, and a waiter with an earlier ticket joins
   * n2's line ahead of it, to be handed the key at the undo. The attempt
   * ends with the undo's reply at 420 ms, within the 600 ms reservation, so
   * a quorum of handoffs counted would still be a valid lock.
   */
  it('does not count it: the waiter holds nothing that node took back', async () => {
    const direct = nodes.clients();
    const proxies = await nodes.proxies();
    const proxied = await nodes.proxiedClients();
    const [n0, n1, n2] = direct as [Redis, Redis, Redis];
    const ahead = `0badc0de.${'a'.repeat(32)}`;
    // The script in each node's cache: an attempt that met NOSCRIPT is sent
    // again after the undo queued behind it, and the undo then runs first.
    await Promise.all(direct.map((client) => acquireInLine(client, ['warm'], ahead, 1_000, false, { ticket: 1, leaseMs: 1_000 })));
    try {
      for (let tries = 1; ; tries++) {
        const resource = `undone-handoff-${tries}`;
        const [line] = lineKeysFor(resource);
        const holder = await new Redlock(direct, patient).acquire(resource, 30_000);
        proxies[0]!.latencyMs = 60;
        proxies[2]!.latencyMs = 150;
        const acquires = recordChannel<AcquireEvent>('quorumlock:acquire');
        recorders.push(acquires);
        const waiter = new Redlock([proxied[0]!, n1.duplicate(), proxied[2]!], { nodeTimeoutMs: 3_000 });
        const controller = new AbortController();
        let granted: Lock | undefined;
        const waiting = waiter.acquire(resource, 5_000, { acquireTimeoutMs: 30_000, signal: controller.signal }).then(
          (lock) => (granted = lock),
          () => undefined,
        );
        // The waiter's attempt from the lines has reached n2 (and n1, at once); its undo is on its way.
        await expect.poll(async () => (await n2.zrange(line, 0, -1, 'WITHSCORES')).length, { timeout: 10_000, interval: 2 }).toBeGreaterThan(0);
        const [value = '', ticket = '0'] = await n2.zrange(line, 0, 0, 'WITHSCORES');
        await Promise.all([n1, n2].map((client) => release(client, [resource], holder.value, 'marked')));
        const joined = await acquireInLine(n2, [resource], ahead, 30_000, false, { ticket: Number(ticket) - 1, leaseMs: 10_000 });
        const handedBack = async () => (await n2.get(resource))?.replace(/!$/, '');
        // Built as meant: n2 had handed the key to the waiter when the other joined ahead of it, and the undo handed it on.
        let built = !joined.granted && (await handedBack()) === value;
        if (built) {
          const reservedUntil = performance.now() + (await n2.pttl(resource));
          await expect.poll(async () => (await handedBack()) !== value, { timeout: 5_000, interval: 5 }).toBe(true);
          const after = await handedBack();
          // The waiter's 600 ms reservation ran out before the undo reached n2 (seen at load 9): the
          // undo then found no key to hand on, and the race was not the one meant. A key gone sooner
          // was deleted, not expired: that fails here.
          if (after === undefined && performance.now() >= reservedUntil) built = false;
          else expect(after).toBe(ahead);
        }
        // The attempt ends with the undo's reply, 300 ms later; the waiter then weighs the handoffs it heard.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        controller.abort();
        await waiting;
        proxies[0]!.latencyMs = 0;
        proxies[2]!.latencyMs = 0;
        await granted?.release();
        if (!built) {
          // A stall of this machine longer than the 120 ms window, or than the reservation: build it again.
          expect(tries, 'the race was not built in 3 tries').toBeLessThan(3);
          continue;
        }
        const handedOff = acquires.events.filter((event) => event.granted && event.handedOff);
        expect(handedOff.map((event) => event.nodes.map((node) => `${node.node} ${node.status}`))).toEqual([]);
        expect(granted).toBeUndefined();
        return;
      }
    } finally {
      proxies[0]!.latencyMs = 0;
      proxies[2]!.latencyMs = 0;
    }
  }, 60_000);
});
