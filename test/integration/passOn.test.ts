/**
 * A lock passed from holder to the next waiter of the same process (lock
 * cohorting): no node is asked, the waiter keeps the lock's value and
 * validity, only those already in line when the lock came from the nodes get
 * it this way, never with fencing, never with too little validity left.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AcquireEvent, type Lock, RedisLock, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { lockRequests } from '../support/lockRequests.js';
import { patient } from '../support/patient.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

function watchAcquires(): { events: AcquireEvent[]; stop: () => void } {
  const events: AcquireEvent[] = [];
  const listener = (event: unknown) => events.push(event as AcquireEvent);
  subscribe('quorumlock:acquire', listener);
  return { events, stop: () => unsubscribe('quorumlock:acquire', listener) };
}

/** Until `count` callers of this process wait in line behind the holder: their heads listen on every node. */
async function linedUp(clients: readonly Redis[], resource: string): Promise<void> {
  const channel = `quorumlock:released:${resource}`;
  await expect
    .poll(async () => (await Promise.all(clients.map(async (c) => Number(((await c.pubsub('NUMSUB', channel)) as [string, number])[1])))).every((n) => n >= 1), {
      timeout: 10_000,
      interval: 10,
    })
    .toBe(true);
}

describe.each([
  { name: 'RedisLock', count: 1, make: (clients: Redis[]) => new RedisLock(clients[0]!, patient) },
  { name: 'Redlock on 3 nodes', count: 3, make: (clients: Redis[]) => new Redlock(clients, patient) },
])('a lock passed inside a process: $name', ({ count, make }) => {
  it('goes to the waiters that were in line when it came from the nodes, with no request, keeping value and validity', async () => {
    const clients = nodes.clients().slice(0, count);
    const locker = make(clients);
    const holder = await locker.acquire('order:7', 10_000);
    const held: Lock[] = [];
    const waiters = Array.from({ length: 6 }, () =>
      locker.using('order:7', 10_000, async (_signal, lock) => {
        held.push(lock);
        await sleep(1);
      }),
    );
    await linedUp(clients, 'order:7');
    const acquires = watchAcquires();
    await holder.release();
    const before = await lockRequests(clients);
    try {
      await Promise.all(waiters);
    } finally {
      acquires.stop();
    }
    // The first waiter took the lock from the nodes; it passed to the five behind it.
    expect(acquires.events.filter((e) => e.granted && e.passed === true)).toHaveLength(5);
    expect(new Set(held.map((lock) => lock.value)).size).toBe(1);
    // The validity passes as it is; but a lock the nodes handed over (under load, the first waiter may be
    // mid-attempt when its holder releases) starts with the reservation's, and once its claim is back the
    // holders it passes to after that count from the claim, as after an extend.
    const handedOff = acquires.events.some((e) => e.granted && e.handedOff === true);
    expect(new Set(held.slice(1).map((lock) => lock.validUntil)).size).toBeLessThanOrEqual(handedOff ? 2 : 1);
    // Only the first waiter's claim and the last holder's release reached the nodes (plus a leave per node).
    expect((await lockRequests(clients)) - before).toBeLessThanOrEqual(4 * count);
  });

  it('a caller that arrived after the lock came from the nodes waits for the next round', async () => {
    const clients = nodes.clients().slice(0, count);
    const locker = make(clients);
    const holder = await locker.acquire('stock:3', 10_000);
    const passed: boolean[] = [];
    const acquires = watchAcquires();
    let firstHolds!: () => void;
    const holding = new Promise<void>((resolve) => (firstHolds = resolve));
    const early = [0, 1].map((i) =>
      locker.using('stock:3', 10_000, async () => {
        // Whoever holds first lets a late caller join while it holds.
        if (i === 0) {
          firstHolds();
          await sleep(50);
        }
      }),
    );
    await linedUp(clients, 'stock:3');
    await holder.release();
    await holding;
    // Started here, not inside the routine, where it would re-enter the held lock.
    const late = locker.using('stock:3', 10_000, async () => undefined);
    await Promise.all(early);
    await late;
    acquires.stop();
    for (const event of acquires.events.filter((e) => e.granted)) passed.push(event.passed === true);
    // First early waiter: from the nodes; second: passed; the late one: from the nodes again.
    expect(passed).toEqual([false, true, false]);
  });

  it('the waiter it passed to resumes before the release resolves: the releaser has nothing to wait for', async () => {
    const clients = nodes.clients().slice(0, count);
    const locker = make(clients);
    const first = await locker.acquire('cart:5', 10_000);
    const second = locker.acquire('cart:5', 10_000);
    await linedUp(clients, 'cart:5');
    // The lock came from the nodes to the first waiter: the two behind it get it passed.
    const order: string[] = [];
    const third = locker.acquire('cart:5', 10_000).then((lock) => {
      order.push('third holds');
      return lock;
    });
    await first.release();
    const holder = await second;
    await linedUp(clients, 'cart:5');
    const released = holder.release().then((result) => {
      order.push('released');
      return result;
    });
    expect((await released).passedOn).toBe(true);
    await (await third).release();
    expect(order).toEqual(['third holds', 'released']);
  });

  it('is never passed with fencing: every holder gets a larger token from the nodes', async () => {
    const clients = nodes.clients().slice(0, count);
    const locker = count === 1 ? new RedisLock(clients[0]!, { ...patient, fencing: true }) : new Redlock(clients, { ...patient, fencing: true });
    const holder = await locker.acquire('ledger', 10_000);
    const tokens: bigint[] = [];
    const waiters = Array.from({ length: 4 }, () => locker.using('ledger', 10_000, async (_signal, lock) => void tokens.push(lock.fencingToken!)));
    await linedUp(clients, 'ledger');
    const acquires = watchAcquires();
    await holder.release();
    await Promise.all(waiters);
    acquires.stop();
    expect(acquires.events.some((e) => e.passed === true)).toBe(false);
    expect(tokens).toEqual([...tokens].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(tokens).size).toBe(4);
  });

  it('is not passed with less than 90% of a fresh validity left: the next holder takes it from the nodes', async () => {
    const clients = nodes.clients().slice(0, count);
    const locker = make(clients);
    const holder = await locker.acquire('report', 10_000);
    const waiters = Array.from({ length: 3 }, (_, i) =>
      locker.using('report', 1_000, async (_signal, lock) => {
        // The first holder keeps it until less than 90% of 1 s is left.
        if (i === 0) await sleep(200);
        return lock;
      }),
    );
    await linedUp(clients, 'report');
    const acquires = watchAcquires();
    await holder.release();
    const locks = await Promise.all(waiters);
    acquires.stop();
    expect(acquires.events.filter((e) => e.granted).map((e) => e.passed === true)).toEqual([false, false, true]);
    expect(locks[1]!.value).not.toBe(locks[0]!.value);
    expect(locks[2]!.value).toBe(locks[1]!.value);
  });
});
