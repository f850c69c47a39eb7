import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedisLock, Redlock } from '../../src/index.js';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { LOCKER_KINDS } from '../support/lockerKinds.js';
import { patient } from '../support/patient.js';

let nodes: LocalNodeSet;
let clients: Redis[];

beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
});

afterAll(async () => {
  await nodes.stopAll();
});

beforeEach(async () => {
  await nodes.flushAll();
});

/** Every key of every node with its value and whether it expires: what inspect() must leave as it was. */
async function snapshot(): Promise<string[][]> {
  return Promise.all(
    clients.map(async (client) => {
      const keys = (await client.keys('*')).sort();
      return Promise.all(keys.map(async (key) => `${key} ${await client.type(key)} ${(await client.pttl(key)) > 0}`));
    }),
  );
}

describe.each(LOCKER_KINDS)('locker.inspect(), $name', (kind) => {
  it('names the holder, its remaining TTL and every node’s reading', async () => {
    const locker = kind.make(clients);
    const lock = await locker.acquire('inspect:held', 10_000);
    const inspection = await locker.inspect('inspect:held');
    expect(inspection).toMatchObject({ quorum: Math.floor(kind.nodeCount / 2) + 1, answered: kind.nodeCount });
    const [resource] = inspection.resources;
    expect(resource).toMatchObject({ resource: 'inspect:held', state: 'held', holder: lock.value, heldOn: kind.nodeCount, waiters: 0 });
    expect(resource?.remainingMs).toBeGreaterThan(0);
    expect(resource?.remainingMs).toBeLessThanOrEqual(10_000);
    expect(inspection.nodes).toHaveLength(kind.nodeCount);
    for (const node of inspection.nodes) {
      expect(node.status).toBe('ok');
      expect(node.keys).toEqual([{ resource: 'inspect:held', value: lock.value, waiterMarked: false, pttlMs: expect.any(Number), waiters: 0 }]);
    }
    await lock.release();
  });

  it('says a resource nobody holds is free, for several resources at once', async () => {
    const locker = kind.make(clients);
    const lock = await locker.acquire('inspect:one', 10_000);
    const inspection = await locker.inspect(['inspect:one', 'inspect:two']);
    expect(inspection.resources.map((r) => [r.resource, r.state, r.holder])).toEqual([
      ['inspect:one', 'held', lock.value],
      ['inspect:two', 'free', null],
    ]);
    await lock.release();
  });

  it('counts the waiters whose place in the line is live, and changes nothing on the nodes', async () => {
    const holder = kind.make(clients);
    const lock = await holder.acquire('inspect:wanted', 10_000);
    // Another client: a waiter of another process, which stands in the nodes' wait line.
    const waiterClients = nodes.clients();
    const waiting = kind.make(waiterClients).acquire('inspect:wanted', 10_000);
    await expect.poll(async () => (await holder.inspect('inspect:wanted')).resources[0]?.waiters, { timeout: 5_000 }).toBe(1);
    // A place whose lease passed long ago is not a waiter.
    const [line, lease] = lineKeysFor('inspect:wanted');
    await clients[0]!.zadd(line, 999, 'dead-waiter');
    await clients[0]!.zadd(lease, 1, 'dead-waiter');
    const before = await snapshot();
    const inspection = await holder.inspect('inspect:wanted');
    expect(await snapshot()).toEqual(before);
    expect(inspection.resources[0]).toMatchObject({ state: 'held', holder: lock.value, waiters: 1 });
    expect(inspection.nodes[0]?.keys?.[0]).toMatchObject({ waiterMarked: true, waiters: 1 });
    await lock.release();
    await (await waiting).release();
  });

  it('reports a paused node as a timeout with the others’ readings', async () => {
    // Paused vs live is the point: patient's 1 s is the suite's margin for a live node under load (100 ms is not).
    const locker = kind.make(clients, patient);
    const lock = await locker.acquire('inspect:paused', 10_000);
    await nodes.node(0).pause();
    try {
      const inspection = await locker.inspect('inspect:paused');
      expect(inspection.nodes[0]).toMatchObject({ status: 'timeout', error: { code: ErrorCode.NODE_TIMEOUT } });
      expect(inspection.answered).toBe(kind.nodeCount - 1);
      expect(inspection.resources[0]?.state).toBe(kind.nodeCount === 1 ? 'unknown' : 'held');
    } finally {
      await nodes.node(0).resume();
    }
    await lock.release();
  });
});

describe('locker.inspect() on Redlock', () => {
  it('says contested when no value stands on a quorum but a quorum answered', async () => {
    const redlock = new Redlock(clients, patient);
    await clients[0]!.set('inspect:split', 'a', 'PX', 10_000);
    await clients[1]!.set('inspect:split', 'b', 'PX', 10_000);
    const inspection = await redlock.inspect('inspect:split');
    expect(inspection.resources[0]).toMatchObject({ state: 'contested', holder: null, heldOn: 0 });
  });

  it('gives the quorum-th longest TTL: until then a quorum holds the value', async () => {
    const redlock = new Redlock(clients, patient);
    await clients[0]!.set('inspect:ttl', 'v', 'PX', 30_000);
    await clients[1]!.set('inspect:ttl', 'v', 'PX', 20_000);
    await clients[2]!.set('inspect:ttl', 'v', 'PX', 5_000);
    const [resource] = (await redlock.inspect('inspect:ttl')).resources;
    expect(resource?.holder).toBe('v');
    expect(resource?.remainingMs).toBeGreaterThan(5_000);
    expect(resource?.remainingMs).toBeLessThanOrEqual(20_000);
  });

  it('refuses bad input by name', async () => {
    const locker = new RedisLock(clients[0]!, patient);
    await expect(locker.inspect([])).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT });
    await expect(locker.inspect('x', { timeout: 1 } as never)).rejects.toMatchObject({ argument: 'options.timeout' });
  });
});
