import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { LOCKER_KINDS } from '../support/lockerKinds.js';

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

describe.each(LOCKER_KINDS)('await using, $name', (kind) => {
  it('releases the lock on every node when the block ends', async () => {
    const clients = nodes.clients();
    const locker = kind.make(clients);
    let value = '';
    {
      await using lock = await locker.acquire('dispose:ends', 10_000);
      value = lock.value;
      // A quorum holds it; the one node that may not is one whose reply missed the default 50 ms
      // node timeout (a loaded run once: node 0), its late write undone.
      const holding = (await Promise.all(clients.slice(0, kind.nodeCount).map((client) => client.get('dispose:ends')))).filter((v) => v === value);
      expect(holding.length).toBeGreaterThanOrEqual(Math.floor(kind.nodeCount / 2) + 1);
    }
    // The release resolves once a quorum answered; the last node's delete may still be on its way.
    const left = () => Promise.all(clients.slice(0, kind.nodeCount).map((client) => client.get('dispose:ends')));
    await expect.poll(left, { timeout: 2_000 }).toEqual(Array.from({ length: kind.nodeCount }, () => null));
  });

  it('releases when the block throws, and the block’s own error comes out unwrapped', async () => {
    const clients = nodes.clients();
    const locker = kind.make(clients);
    const boom = new Error('the block failed');
    const block = async (): Promise<void> => {
      await using lock = await locker.acquire('dispose:throws', 10_000);
      expect(lock.holds).toBe(1);
      throw boom;
    };
    await expect(block()).rejects.toBe(boom);
    await expect.poll(() => clients[0]!.get('dispose:throws'), { timeout: 2_000 }).toBeNull();
  });

  it('never masks the block’s error with a release that cannot reach the nodes', async () => {
    const clients = nodes.clients();
    const locker = kind.make(clients, { nodeTimeoutMs: 100 });
    const boom = new Error('the block failed while Redis was gone');
    const block = async (): Promise<void> => {
      await using _lock = await locker.acquire('dispose:outage', 10_000);
      // Every connection of the locker drops: the release at the block's end fails on each node.
      for (const client of clients) client.disconnect();
      throw boom;
    };
    await expect(block()).rejects.toBe(boom);
  });

  it('a block that ends normally resolves even when the release fails', async () => {
    const clients = nodes.clients();
    const locker = kind.make(clients, { nodeTimeoutMs: 100 });
    const block = async (): Promise<string> => {
      await using _lock = await locker.acquire('dispose:quiet', 10_000);
      for (const client of clients) (client as Redis).disconnect();
      return 'done';
    };
    await expect(block()).resolves.toBe('done');
  });
});
