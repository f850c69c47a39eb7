import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, InvalidArgumentError, type Lock, LockHeldError, RedisReadWriteLock, RedlockReadWriteLock, UpgradeRefusedError } from '../../src/index.js';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { leave } from '../../src/scripts/line.js';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { patient } from '../support/patient.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const once = { ...patient, acquireTimeoutMs: 0 };

describe('RedisReadWriteLock on one node', () => {
  let nodes: LocalNodeSet;
  let client: Redis;

  beforeAll(async () => {
    nodes = await startNodes(1);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    await nodes.flushAll();
    client = nodes.clients()[0]!;
  });
  afterEach(() => {
    client.disconnect();
  });

  it('admits any number of readers together, and no writer while one reads', async () => {
    // The claim must outlast five releases and a read attempt: on node-redis, with the machine loaded,
    // they took over 100 ms once. 1 s is ten times that; the sleeps below wait it out with 10% to spare.
    const rw = new RedisReadWriteLock(client, { ...once, writerClaimMs: 1000 });
    const readers = await Promise.all(Array.from({ length: 5 }, () => rw.read.acquire('config', 10_000)));
    const [, readersKey] = readWriteKeys('config');
    expect(await client.zcard(readersKey)).toBe(5);
    expect(await rw.write.tryAcquire('config', 10_000)).toBeNull();
    for (const reader of readers) await reader.release();
    // The refused writer went away; its claim holds writers and readers back until it lapses.
    expect(await rw.read.tryAcquire('config', 10_000)).toBeNull();
    await sleep(1100);
    const writer = await rw.write.acquire('config', 10_000);
    expect(await rw.read.tryAcquire('config', 10_000)).toBeNull();
    expect(await rw.write.tryAcquire('config', 10_000)).toBeNull();
    await writer.release();
    await sleep(1100);
    expect(await rw.read.tryAcquire('config', 10_000)).not.toBeNull();
  });

  it('a waiting writer holds new readers back, and a dead writer’s claim lapses after writerClaimMs', async () => {
    const rw = new RedisReadWriteLock(client, { ...once, writerClaimMs: 300 });
    const reader = await rw.read.acquire('cache', 10_000);
    // The writer tries once and goes away (as if it died): its claim stays behind for 300 ms.
    expect(await rw.write.tryAcquire('cache', 10_000)).toBeNull();
    const [, , claimKey] = readWriteKeys('cache');
    expect(await client.pttl(claimKey)).toBeGreaterThan(0);
    expect(await rw.read.tryAcquire('cache', 10_000)).toBeNull();
    await sleep(400);
    const late = await rw.read.tryAcquire('cache', 10_000);
    expect(late).not.toBeNull();
    await Promise.all([reader.release(), late!.release()]);
  });

  it('a writer waiting behind readers gets the lock once they leave, before new readers', async () => {
    const rw = new RedisReadWriteLock(client, { ...patient, writerClaimMs: 1_000, retry: { retries: 100, baseDelayMs: 20, maxDelayMs: 50 } });
    const reader = await rw.read.acquire('doc', 10_000);
    const writing = rw.write.acquire('doc', 10_000, { acquireTimeoutMs: 5_000 });
    await sleep(100);
    // New readers wait behind the writer.
    expect(await rw.read.tryAcquire('doc', 10_000)).toBeNull();
    await reader.release();
    const writer = await writing;
    expect(await client.get(readWriteKeys('doc')[0])).toBe(writer.value);
    await writer.release();
  });

  it('a reader that gives up leaves its line, and a reservation handed to it goes with it (leave.lua on the readers’ set)', async () => {
    const [, readersKey] = readWriteKeys('report');
    const [line, lease] = lineKeysFor(readersKey);
    // A reader that stood in line, then was handed a reservation by a writer's release it never took.
    await client.zadd(readersKey, Date.now() + 600_000, 'gave-up');
    await client.zadd(readersKey, Date.now() + 600_000, 'reading');
    await client.zadd(line, 1, 'gave-up');
    await client.zadd(lease, Date.now() + 600_000, 'gave-up');
    // Before, its GET on the sorted set failed (WRONGTYPE) and left the reservation standing.
    expect(await leave(client, [readersKey], 'gave-up', false)).toBe(1);
    expect(await client.zrange(readersKey, 0, -1)).toEqual(['reading']);
    expect(await client.zcard(line)).toBe(0);
  });

  it('an expired reader is pruned: it no longer keeps a writer out', async () => {
    const rw = new RedisReadWriteLock(client, once);
    await rw.read.acquire('stale', 150);
    await sleep(250);
    const writer = await rw.write.tryAcquire('stale', 10_000);
    expect(writer).not.toBeNull();
    await writer!.release();
  });

  it('extends a reader’s lease and keeps every key on a TTL covering the longest lease', async () => {
    const rw = new RedisReadWriteLock(client, once);
    const short = await rw.read.acquire('ttl', 2_000);
    const long = await rw.read.acquire('ttl', 8_000);
    await short.extend(20_000);
    const [, readersKey] = readWriteKeys('ttl');
    expect(await client.pttl(readersKey)).toBeGreaterThan(19_000);
    await Promise.all([short.release(), long.release()]);
    const writer = await rw.write.acquire('ttl', 5_000);
    expect(await client.pttl(readWriteKeys('ttl')[0])).toBeGreaterThan(4_000);
    await writer.release();
  });

  it('downgrades a writer to a reader with no gap for another writer, and refuses an upgrade', async () => {
    const rw = new RedisReadWriteLock(client, once);
    const writer = await rw.write.acquire('report', 10_000);
    const reader = await rw.downgrade(writer, 10_000);
    expect(reader.value).toBe(writer.value);
    expect(writer.signal.aborted).toBe(true);
    const [writerKey, readersKey] = readWriteKeys('report');
    expect(await client.exists(writerKey)).toBe(0);
    expect(await client.zscore(readersKey, reader.value)).not.toBeNull();
    // Other readers may join now; writers may not.
    const other = await rw.read.tryAcquire('report', 10_000);
    expect(other).not.toBeNull();
    expect(await rw.write.tryAcquire('report', 10_000)).toBeNull();
    await expect(rw.upgrade(reader)).rejects.toBeInstanceOf(UpgradeRefusedError);
    await Promise.all([reader.release(), other!.release()]);
  });

  it('refuses the write lock inside a reader’s routine (UpgradeRefusedError), and nested reads re-enter', async () => {
    const rw = new RedisReadWriteLock(client, once);
    const outcome = await rw.read.using('nest', 10_000, async (_signal, outer) => {
      const inner = await rw.read.acquire('nest', 10_000);
      const reentered = inner.value === outer.value;
      await inner.release();
      const refused = await rw.write.acquire('nest', 10_000).catch((error: unknown) => error);
      return { reentered, refused };
    });
    expect(outcome.reentered).toBe(true);
    expect(outcome.refused).toBeInstanceOf(UpgradeRefusedError);
    expect((outcome.refused as UpgradeRefusedError).code).toBe(ErrorCode.UPGRADE_REFUSED);
    const [, readersKey] = readWriteKeys('nest');
    expect(await client.zcard(readersKey)).toBe(0);
  });

  it('hands each writer a fencing token larger than every earlier writer’s, readers none', async () => {
    const rw = new RedisReadWriteLock(client, { ...once, fencing: true });
    const tokens: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const writer = await rw.write.acquire('fenced', 10_000);
      tokens.push(writer.fencingToken!);
      await writer.release();
    }
    expect(tokens[1]! > tokens[0]! && tokens[2]! > tokens[1]!).toBe(true);
    const reader = await rw.read.acquire('fenced', 10_000);
    expect(reader.fencingToken).toBeUndefined();
    await reader.release();
  });

  it('names bad arguments', async () => {
    expect(() => new RedisReadWriteLock(client, { writerClaimMs: 0 })).toThrow(/options.writerClaimMs/);
    expect(() => new RedisReadWriteLock(client, { wakeUp: 'yes' as never })).toThrow(InvalidArgumentError);
    await expect(new RedisReadWriteLock(client).read.acquire('', 1_000)).rejects.toThrow(/resource/);
  });
});

describe('RedlockReadWriteLock on 5 nodes', () => {
  let nodes: LocalNodeSet;
  let clients: Redis[];

  beforeAll(async () => {
    nodes = await startNodes(5);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });
  beforeEach(async () => {
    for (let i = 0; i < 5; i++) if (!nodes.node(i).isRunning) await nodes.node(i).start();
    await nodes.flushAll();
    clients = nodes.clients();
  });
  afterEach(() => {
    for (const client of clients) client.disconnect();
  });

  it('racing writers and readers: a writer never holds together with anyone', async () => {
    const rw = new RedlockReadWriteLock(clients, once);
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 3 === 0 ? rw.write.tryAcquire('race', 10_000) : rw.read.tryAcquire('race', 10_000)).then((lock) => ({ write: i % 3 === 0, lock }))),
    );
    const held = attempts.filter((a): a is { write: boolean; lock: Lock } => a.lock !== null);
    const writers = held.filter((a) => a.write).length;
    expect(writers === 0 || held.length === 1).toBe(true);
    for (const { lock } of held) expect((await (await lock.release()).settled).released).toBe(5);
  });

  it('writers’ fencing tokens increase across writers on a quorum', async () => {
    const rw = new RedlockReadWriteLock(clients, { ...once, fencing: true });
    const first = await rw.write.acquire('fenced', 10_000);
    await (await first.release()).settled;
    const second = await rw.write.acquire('fenced', 10_000);
    expect(second.fencingToken! > first.fencingToken!).toBe(true);
    await second.release();
  });

  it('acquires with 2 of 5 nodes killed; a reader holds out a writer on the surviving majority', async () => {
    const rw = new RedlockReadWriteLock(clients, { ...once, writerClaimMs: 100 });
    await nodes.node(1).kill();
    await nodes.node(4).kill();
    const reader = await rw.read.acquire('down', 10_000);
    await expect(rw.write.acquire('down', 10_000)).rejects.toBeInstanceOf(LockHeldError);
    await reader.release();
    await sleep(150);
    const writer = await rw.write.acquire('down', 10_000);
    await writer.release();
  });
});
