// A read-write lock: readers of a price list run together, a writer runs
// alone. Six readers and two writers work on one resource, on one Redis
// server and then on five independent ones; the program records who is
// inside at every entry and checks that a writer never shares the resource,
// then shows a downgrade, the refused upgrade and tryAcquire.
//
// It needs Redis on localhost: 6379 for the first part, 6379..6383 for the
// second, e.g. `redis-server --port 6379 --save ''` per port.
//
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx read-write-lock.ts
//
// In this repository, where 'quorumlock' resolves to the package itself
// through the "exports" of its package.json, that is to dist/:
//
//   npm run build && node --import tsx examples/read-write-lock.ts
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, type ReadWriteLock, RedisReadWriteLock, RedlockReadWriteLock } from 'quorumlock';

// A name of its own per run, so a run never meets the leases of the last one.
const resource = `example:prices:${process.pid}:${Date.now()}`;

interface Inside {
  readers: number;
  writers: number;
  mostReaders: number;
}

/** Six readers and two writers, three turns each; fails if a writer ever had company. */
async function work(rw: ReadWriteLock, key: string): Promise<Inside> {
  const inside: Inside = { readers: 0, writers: 0, mostReaders: 0 };
  const reader = async () => {
    for (let turn = 0; turn < 3; turn++) {
      await rw.read.using(key, 5_000, async (signal) => {
        inside.readers += 1;
        inside.mostReaders = Math.max(inside.mostReaders, inside.readers);
        assert.equal(inside.writers, 0, 'a reader never meets a writer');
        await sleep(10, undefined, { signal });
        inside.readers -= 1;
      });
    }
  };
  const writer = async () => {
    for (let turn = 0; turn < 3; turn++) {
      await rw.write.using(key, 5_000, async (signal) => {
        inside.writers += 1;
        assert.equal(inside.writers, 1, 'one writer at a time');
        assert.equal(inside.readers, 0, 'no reader beside a writer');
        await sleep(10, undefined, { signal });
        inside.writers -= 1;
      });
    }
  };
  await Promise.all([...Array.from({ length: 6 }, reader), writer(), writer()]);
  return inside;
}

/** The calls made by hand: downgrade, the refused upgrade, tryAcquire. */
async function byHand(rw: ReadWriteLock, key: string): Promise<void> {
  const writeLock = await rw.write.acquire(key, 5_000);
  // While the writer holds it, nobody else gets in.
  assert.equal(await rw.read.tryAcquire(key, 5_000), null);

  // The writer becomes a reader in one step: no other writer can come between.
  const readLock = await rw.downgrade(writeLock);
  assert.equal(readLock.value, writeLock.value);
  const otherReader = await rw.read.tryAcquire(key, 5_000);
  assert.ok(otherReader !== null, 'readers share the resource');
  assert.equal(await rw.write.tryAcquire(key, 5_000), null, 'a writer waits for the readers');

  // Upgrading a read lock is always refused: two readers upgrading would wait for each other.
  await assert.rejects(rw.upgrade(readLock), (error) => isQuorumLockError(error, ErrorCode.UPGRADE_REFUSED));

  await readLock.release();
  await otherReader.release();
}

const single = new Redis(6379);
const nodes = [6379, 6380, 6381, 6382, 6383].map((port) => new Redis(port));

try {
  const onOne = new RedisReadWriteLock(single);
  const one = await work(onOne, `${resource}:one-node`);
  await byHand(onOne, `${resource}:one-node:by-hand`);
  console.log(`1 node: readers together (up to ${one.mostReaders} at once), writers alone`);

  // Independent nodes, not replicas of each other: every hold needs 3 of the 5.
  const onFive = new RedlockReadWriteLock(nodes);
  const five = await work(onFive, `${resource}:five-nodes`);
  await byHand(onFive, `${resource}:five-nodes:by-hand`);
  console.log(`5 nodes: readers together (up to ${five.mostReaders} at once), writers alone`);
} finally {
  // quit() waits for the requests still on their way; the process then exits by itself.
  await Promise.all([single.quit(), ...nodes.map((node) => node.quit())]);
}
