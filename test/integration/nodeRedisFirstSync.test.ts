/**
 * A fresh node-redis client's first synced lock: the write goes out on a sync
 * connection still opening, and its reply can come before that socket is
 * marked ready (socketEpoch 0, then 1). Read as two sockets, the write seemed
 * to span a reconnect and the node failed with `connectionChanged` (2 of 3
 * runs of this file failed so before nodeRedis.ts's socketMark).
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisLock } from '../../src/index.js';
import { RedisServer } from '../support/RedisServer.js';

const master = new RedisServer();
const replica = new RedisServer({ replicaOf: master });

beforeAll(async () => {
  await master.start();
  await replica.start();
  const admin = createClient({ url: master.url });
  await admin.connect();
  await admin.sendCommand(['SET', 'synced', '1']);
  // The replica in sync before the locks, so that only the connection can fail them.
  expect(await admin.sendCommand(['WAIT', '1', '10000'])).toBe(1);
  await admin.close();
});

afterAll(async () => {
  await replica.stop();
  await master.stop();
});

it('takes a synced lock on the first try of each of five fresh node-redis clients', async () => {
  for (let i = 0; i < 5; i++) {
    const client = createClient({ url: master.url });
    await client.connect();
    try {
      const locker = new RedisLock(client, { nodeTimeoutMs: 2000, syncReplicas: { replicas: 1, timeoutMs: 1000 } });
      const lock = await locker.tryAcquire(`first-sync:${i}`, 10_000).catch((error: unknown) => error);
      expect(lock, String((lock as Error | null)?.message)).toHaveProperty('value');
      await (lock as { release(): Promise<unknown> }).release();
    } finally {
      await client.close();
    }
  }
});
