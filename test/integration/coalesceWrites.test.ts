import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisLock, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';

let nodes: LocalNodeSet;
let clients: Redis[];

beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
  await Promise.all(clients.map((client) => client.ping()));
});
afterAll(async () => {
  await nodes.stopAll();
});
beforeEach(async () => {
  await nodes.flushAll();
});

/**
 * Counts the writes that reach a client's socket (one per system call), and
 * how many of them happened inside the `write()` that queued them (not held
 * back by a cork).
 */
function countWrites(client: Redis): { readonly count: number; readonly inline: number; restore(): void } {
  type Method = (...args: unknown[]) => unknown;
  const stream = client.stream as unknown as Record<'write' | '_write' | '_writev', Method>;
  const original = { write: stream.write, _write: stream._write, _writev: stream._writev };
  let count = 0;
  let inline = 0;
  let insideWrite = false;
  stream.write = function (this: unknown, ...args: unknown[]) {
    insideWrite = true;
    try {
      return original.write.apply(this, args);
    } finally {
      insideWrite = false;
    }
  };
  for (const name of ['_write', '_writev'] as const) {
    const real = original[name];
    stream[name] = function (this: unknown, ...args: unknown[]) {
      count++;
      if (insideWrite) inline++;
      return real.apply(this, args);
    };
  }
  return {
    get count() {
      return count;
    },
    get inline() {
      return inline;
    },
    restore() {
      Object.assign(stream, original);
    },
  };
}

describe('coalesced writes', () => {
  it('sends the lock commands of one tick on a client in three writes, and every lock still works', async () => {
    const [client] = clients as [Redis];
    const locker = new RedisLock(client, patient);
    const writes = countWrites(client);
    try {
      const acquiring = Array.from({ length: 20 }, (_, i) => locker.acquire(`coalesce:${i}`, 10_000));
      const locks = await Promise.all(acquiring);
      // The first two go out at once (fewer than two replies were pending);
      // the other 18 leave together when the tick ends.
      expect([writes.count, writes.inline]).toEqual([3, 2]);
      const values = await client.mget(locks.map((lock) => lock.resources[0] ?? ''));
      expect(values).toEqual(locks.map((lock) => lock.value));
      const released = await Promise.all(locks.map((lock) => lock.release()));
      expect(released.map((r) => r.released)).toEqual(locks.map(() => 1));
      expect(await client.exists(locks.map((lock) => lock.resources[0] ?? ''))).toBe(0);
    } finally {
      writes.restore();
    }
  });

  it('writes every 32 commands held back in one tick, not only when it ends', async () => {
    const [client] = clients as [Redis];
    const locker = new RedisLock(client, patient);
    const writes = countWrites(client);
    try {
      const locks = await Promise.all(Array.from({ length: 70 }, (_, i) => locker.acquire(`coalesce:many${i}`, 10_000)));
      // Two at once, then 32 + 32 held back and written as each batch filled
      // (Redis starts on them while the tick goes on), and the last 4 when it ends.
      expect([writes.count, writes.inline]).toEqual([5, 2]);
      const released = await Promise.all(locks.map((lock) => lock.release()));
      expect(released.map((r) => r.released)).toEqual(locks.map(() => 1));
    } finally {
      writes.restore();
    }
  });

  it('writes a lone command at once, not at the end of the tick', async () => {
    const [client] = clients as [Redis];
    const locker = new RedisLock(client, patient);
    const writes = countWrites(client);
    try {
      const lock = await locker.acquire('coalesce:alone', 10_000);
      await lock.release();
      // Every write happened inside the write() call that queued it (a
      // script reload after NOSCRIPT would add one more, also at once).
      expect(writes.count).toBeGreaterThanOrEqual(2);
      expect(writes.inline).toBe(writes.count);
    } finally {
      writes.restore();
    }
  });

  it('writes at once behind one pending reply, and holds back behind two', async () => {
    const [client] = clients as [Redis];
    const locker = new RedisLock(client, patient);
    // A lone caller on many nodes meets one pending reply: the slowest node's
    // answer to its previous vote, decided without it.
    const behind = async (pending: number): Promise<{ count: number; inline: number }> => {
      const replies = Array.from({ length: pending }, () => client.ping());
      const writes = countWrites(client);
      try {
        const lock = await locker.acquire(`coalesce:behind${pending}`, 10_000);
        const seen = { count: writes.count, inline: writes.inline };
        await Promise.all(replies);
        await lock.release();
        return seen;
      } finally {
        writes.restore();
      }
    };
    expect(await behind(1)).toEqual({ count: 1, inline: 1 });
    expect(await behind(2)).toEqual({ count: 1, inline: 0 });
  });

  it('corks each node of a Redlock on its own', async () => {
    const locker = new Redlock(clients, patient);
    const counters = clients.map((client) => countWrites(client));
    try {
      const locks = await Promise.all(Array.from({ length: 10 }, (_, i) => locker.acquire(`coalesce:q${i}`, 10_000)));
      expect(counters.map((c) => c.count)).toEqual([3, 3, 3]);
      await Promise.all(locks.map((lock) => lock.release()));
    } finally {
      for (const counter of counters) counter.restore();
    }
  });
});
