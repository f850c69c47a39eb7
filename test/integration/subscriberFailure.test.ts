import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisLock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(1);
});
afterAll(async () => {
  await nodes.stopAll();
});

it('a waiter whose release subscription fails after a reconnect falls back to polling, with no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const [client, admin] = [...nodes.clients(), ...nodes.clients()] as [Redis, Redis];
  try {
    const locker = new RedisLock(client, patient);
    const holder = await locker.acquire('acl', 30_000);
    const waiting = locker.acquire('acl', 30_000, { acquireTimeoutMs: 60_000, retry: { baseDelayMs: 50, maxDelayMs: 100 } });
    await sleep(300);
    // Taking the channel permission away disconnects the subscriber; its resubscribe is refused (NOPERM).
    await admin.call('ACL', 'SETUSER', 'default', 'resetchannels');
    await sleep(500);
    await holder.release();
    const lock = await waiting;
    expect(await client.get('acl')).toBe(lock.value);
    await lock.release();
    await sleep(100);
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await admin.call('ACL', 'SETUSER', 'default', 'allchannels');
  }
}, 20_000);
