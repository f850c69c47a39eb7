/**
 * Valkey GLIDE (@valkey/valkey-glide) under the same node layer: its adapter
 * runs the scripts through customCommand. GLIDE clients connect
 * asynchronously, so they are not in the QUORUMLOCK_TEST_CLIENT swap; this
 * file covers what the adapter does differently.
 */
import { GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedisLock, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';

let nodes: LocalNodeSet;
let glide: GlideClient[];
let check: Redis[];

beforeAll(async () => {
  nodes = await startNodes(3);
  check = nodes.clients();
  glide = await Promise.all(nodes.endpoints.map((endpoint) => GlideClient.createClient({ addresses: [endpoint], requestTimeout: 2_000 })));
});

afterAll(async () => {
  for (const client of glide ?? []) client.close();
  await nodes.stopAll();
});

beforeEach(async () => {
  await nodes.flushAll();
  // A flush leaves scripts cached; these tests want the NOSCRIPT fallback exercised too.
  await Promise.all(check.map((client) => client.script('FLUSH')));
});

describe('Valkey GLIDE clients', () => {
  it('RedisLock: one holder at a time, multi-resource through the script after NOSCRIPT, release and extend', async () => {
    const locker = new RedisLock(glide[0]!, { ...patient, acquireTimeoutMs: 0 });
    const lock = await locker.acquire(['glide:a', 'glide:b'], 10_000);
    expect(await check[0]!.mget('glide:a', 'glide:b')).toEqual([lock.value, lock.value]);
    await expect(locker.acquire('glide:b', 10_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_HELD });
    await lock.extend(20_000);
    expect(await check[0]!.pttl('glide:a')).toBeGreaterThan(10_000);
    expect((await lock.release()).released).toBe(1);
    expect(await check[0]!.exists('glide:a', 'glide:b')).toBe(0);
  });

  it('Redlock on three GLIDE nodes, with fencing tokens and inspect()', async () => {
    const redlock = new Redlock(glide, { ...patient, fencing: true });
    const first = await redlock.acquire('glide:fenced', 10_000);
    const inspection = await redlock.inspect('glide:fenced');
    expect(inspection.resources[0]).toMatchObject({ state: 'held', holder: first.value, heldOn: 3 });
    await first.release();
    const second = await redlock.acquire('glide:fenced', 10_000);
    expect(second.fencingToken! > first.fencingToken!).toBe(true);
    await second.release();
  });

  it('a waiter gets the lock once the holder releases (by polling: GLIDE gives no subscriber connection)', async () => {
    const holder = await new RedisLock(glide[0]!, patient).acquire('glide:wanted', 10_000);
    const waiting = new RedisLock(glide[0]!, patient).acquire('glide:wanted', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await holder.release();
    const next = await waiting;
    expect(await check[0]!.get('glide:wanted')).toMatch(new RegExp(`^${next.value}!?$`));
    await next.release();
  });

  it('refuses syncReplicas on a GLIDE node, naming it', () => {
    expect(() => new RedisLock(glide[0]!, { ...patient, syncReplicas: { replicas: 1 } })).toThrow(/cannot wait for its replicas/);
  });
});
