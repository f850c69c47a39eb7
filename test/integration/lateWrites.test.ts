/**
 * A request that timed out is still run later: ioredis resends the commands
 * that had no answer once it reconnects, after a Sentinel failover on the
 * promoted replica. Against real Sentinel groups (servers at the default hz
 * 10): such a late write must not keep a key alive past its holder's
 * validity once the holder released or its lock ended.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'vitest';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, RedisLock, RedisReadWriteLock, RedisSemaphore } from '../../src/index.js';
import type { Lock } from '../../src/index.js';
import type { RedisServer } from '../support/RedisServer.js';
import { SentinelGroup } from '../support/SentinelGroup.js';

interface AcquireReplay {
  readonly name: string;
  readonly sync: boolean;
  /** The key the primitive's acquire writes, and the keyspace event of that write. */
  readonly key: string;
  readonly write: string;
  tryAcquire(client: Redis, options: { nodeTimeoutMs: number; syncReplicas?: { replicas: number } }): Promise<Lock | null>;
}

interface ExtendReplay {
  readonly name: string;
  readonly sync: boolean;
  /** The key the lock holds, watched on the replica. */
  readonly key: string;
  acquire(client: Redis, options: { nodeTimeoutMs: number; syncReplicas?: { replicas: number } }, ttlMs: number): Promise<Lock>;
}

interface KeyEvents {
  /** [time, event] of each keyspace notification of the key, in order. */
  readonly seen: [number, string][];
  close(): void;
}

/** Keyspace notifications of `key` on `server` (set, del, zadd, expired, …), with the time each arrived. */
async function keyEvents(server: RedisServer, key: string): Promise<KeyEvents> {
  const subscriber = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);
  await subscriber.config('SET', 'notify-keyspace-events', 'Kg$zx');
  const seen: [number, string][] = [];
  subscriber.on('message', (_channel: string, event: string) => seen.push([performance.now(), event]));
  await subscriber.subscribe(`__keyspace@0__:${key}`);
  return { seen, close: () => subscriber.disconnect() };
}

/**
 * The holder's client keeps its unanswered commands through every reconnect
 * of the failover. With the harness's maxRetriesPerRequest 1, the first
 * refused reconnect rejects them instead (ioredis flushes its old command
 * queue, which is still the one kept for resending), and nothing is
 * replayed; with ioredis's default of 20 they are replayed whenever the
 * failover takes fewer reconnects than that, as it mostly does.
 */
const replaying = { maxRetriesPerRequest: null };

/** A Sentinel group of the test's own, stopped when the test finishes. */
async function startGroup({ onTestFinished }: TestContext): Promise<SentinelGroup> {
  // Sentinels' down-after above the harness's 300 ms: after +switch-master a sentinel's new
  // link to the promoted master stayed disconnected 260-450 ms (SENTINEL MASTER said so while
  // the server answered other clients in under 30 ms), so with 300 ms the sentinels often
  // marked it o_down and failed over to the just-restarted old master and back. That one was
  // left a second master until +convert-to-slave ~10 s later; the holder's client stayed on
  // it, and the lock's end release deleted the key there, not on the master that kept the
  // replayed extend (the synced case's timing hit this in most runs here, the unsynced one in none).
  const group = await SentinelGroup.start({ replicas: 1, downAfterMs: 1500 });
  onTestFinished(() => group.stop());
  return group;
}

/**
 * How long after the later of the holder's validity end and the late write's
 * landing the key may still be there: the release's round trip, sent by the
 * lock's expiry timer or once the late write's reply came, and up to 5 tries
 * 200 ms apart when the connection fails under it (LateWrites), with a busy
 * 2-core machine's event-loop stalls on top: 1.5 s.
 */
const BOUND_MS = 1500;

interface KeyWatch {
  /** When the key was first seen with a TTL longer than `longerThanMs` (the late write), if it was. */
  firstLateAt: number | undefined;
  /** When the key was last seen at all. */
  lastSeenAt: number | undefined;
  /** [time, PTTL] where the key appeared, vanished or got a longer TTL, to explain a failure. */
  readonly changes: [number, number][];
  stop(): Promise<void>;
}

/**
 * One connection to `server` for a case's polls, closed when the case
 * finishes. (group.command() opens one per command, with its ready check:
 * at a poll every 20 ms in each of the cases running at once, that was the
 * test process's own CPU, beside the locks' timers it checks.) The server
 * polled is the promoted replica, which no case stops.
 */
function probe(server: RedisServer, { onTestFinished }: TestContext): Redis {
  const client = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 0, commandTimeout: 1000, connectTimeout: 1000, retryStrategy: () => 100 });
  client.on('error', () => undefined);
  onTestFinished(() => client.disconnect());
  return client;
}

/** Polls the key's PTTL through `client` every 20 ms. */
function watchKey(client: Redis, key: string, longerThanMs: number): KeyWatch {
  let running = true;
  const watch: KeyWatch = {
    firstLateAt: undefined,
    lastSeenAt: undefined,
    changes: [],
    stop: async () => {
      running = false;
      await loop;
    },
  };
  const loop = (async () => {
    while (running) {
      const pttl = await client.pttl(key).catch(() => -3);
      const at = performance.now();
      const last = watch.changes.at(-1);
      if (last === undefined || (last[1] > 0) !== (pttl > 0) || pttl > last[1] + 100) watch.changes.push([Math.round(at), pttl]);
      else if (pttl > 0) last[1] = pttl;
      if (pttl > 0) watch.lastSeenAt = at;
      if (pttl > longerThanMs && watch.firstLateAt === undefined) watch.firstLateAt = at;
      await sleep(20);
    }
  })();
  return watch;
}

describe.concurrent('a write that timed out and runs after a failover', () => {
  // The semaphore's lock ends through the same Lock handle, and its release is its lock's own
  // (finalRelease): sent again after its late writes, as the mutex's is.
  const extended: ExtendReplay[] = [
    { name: 'mutex', sync: false, key: 'orders:1', acquire: (client, options, ttlMs) => new RedisLock(client, options).acquire('orders:1', ttlMs) },
    { name: 'mutex', sync: true, key: 'orders:1', acquire: (client, options, ttlMs) => new RedisLock(client, options).acquire('orders:1', ttlMs) },
    {
      name: 'semaphore',
      sync: true,
      key: '{permits}:permit:0',
      acquire: (client, options, ttlMs) => new RedisSemaphore(client, { ...options, limit: 1 }).acquire('permits', ttlMs),
    },
  ];

  it.for(extended)('a $name extend replayed on the promoted replica does not keep the key past the lock\'s end (syncReplicas $sync)', { timeout: 90_000 }, async ({ sync, key, acquire }, context) => {
    const { expect } = context;
    const group = await startGroup(context);
    const replica = group.servers[1] as RedisServer;
    const client = group.client(replaying);
    const options = { nodeTimeoutMs: 200, ...(sync ? { syncReplicas: { replicas: 1 } } : {}) };
    // Long enough for the key to outlast a slow failover (up to 20 s here when an election
    // failed): an extend replayed after the key expired finds nothing to extend.
    const ttlMs = 10_000;
    const lock = await acquire(client, options, ttlMs);
    await group.waitForReplication();
    await group.master.pause();
    const extend = await lock.extend(30_000).catch((e: unknown) => e);
    expect(isQuorumLockError(extend, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
    const watch = watchKey(probe(replica, context), key, ttlMs);
    context.onTestFinished(() => watch.stop());
    await group.failover('kill');
    expect(group.master).toBe(replica);
    // The holder never releases: its lock ends when its validity does.
    await sleep(Math.max(0, lock.validUntil - performance.now()));
    await expect.poll(() => lock.ended, { timeout: 1000 }).toBe(true);
    await expect
      .poll(() => watch.firstLateAt !== undefined && performance.now() > Math.max(lock.validUntil, watch.firstLateAt) + BOUND_MS, {
        timeout: 30_000,
        interval: 50,
      })
      .toBe(true);
    await watch.stop();
    // The client resent the extend on the promoted replica: it held the key for 30 s there.
    expect(watch.firstLateAt).toBeDefined();
    const pttl = await group.command(replica, 'PTTL', key);
    // The release the lock's end sent (release() returns it), to explain a failure.
    const released = await (await lock.release()).settled;
    const servers = await Promise.all(
      group.servers.map(async (server) => ({
        port: server.port,
        role: ((await group.command(server, 'ROLE').catch(() => ['?'])) as unknown[])[0],
        pttl: await group.command(server, 'PTTL', key).catch(() => '?'),
      })),
    );
    const sentinels = await Promise.all(group.sentinels.map((sentinel) => group.sentinelMaster(sentinel)));
    const times = { validUntil: lock.validUntil, firstLateAt: watch.firstLateAt, lastSeenAt: watch.lastSeenAt, now: performance.now(), released, servers, sentinels, failovers: group.failovers, changes: watch.changes };
    expect(pttl, JSON.stringify(times)).toBeLessThan(0);
    expect((watch.lastSeenAt ?? 0) - Math.max(lock.validUntil, watch.firstLateAt ?? 0)).toBeLessThan(BOUND_MS);
  });

  // A synced attempt's write goes on a connection of its own and its undo on the user's, so a
  // replayed write can land after the undo; the undo is sent again after it once the acquire has
  // ended (GivenUpAttempts), never while it runs: its attempts share one value. Every primitive
  // takes the same path (QuorumCoordinator.endAttempts); the read-write lock's writer takes the
  // mutex's, its reader a script of its own, tested here.
  const primitives: AcquireReplay[] = [
    { name: 'mutex', sync: false, key: 'orders:2', write: 'set', tryAcquire: (client, options) => new RedisLock(client, options).tryAcquire('orders:2', 60_000) },
    { name: 'mutex', sync: true, key: 'orders:2', write: 'set', tryAcquire: (client, options) => new RedisLock(client, options).tryAcquire('orders:2', 60_000) },
    {
      name: 'semaphore',
      sync: true,
      key: '{pool}:permit:0',
      write: 'set',
      tryAcquire: (client, options) => new RedisSemaphore(client, { ...options, limit: 1 }).tryAcquire('pool', 60_000),
    },
    {
      name: 'read-write lock reader',
      sync: true,
      key: '{doc}:readers',
      write: 'zadd',
      tryAcquire: (client, options) => new RedisReadWriteLock(client, options).read.tryAcquire('doc', 60_000),
    },
  ];

  it.for(primitives)('a $name acquire replayed on the promoted replica is undone after it (syncReplicas $sync)', { timeout: 90_000 }, async ({ sync, key, write, tryAcquire }, context) => {
    const { expect } = context;
    const group = await startGroup(context);
    const replica = group.servers[1] as RedisServer;
    const client = group.client(replaying);
    const options = { nodeTimeoutMs: 200, ...(sync ? { syncReplicas: { replicas: 1 } } : {}) };
    // Connections open (the sync ones too) and scripts loaded before the master stops answering.
    const warm = await tryAcquire(client, options);
    expect(warm).not.toBeNull();
    await warm?.release();
    await group.waitForReplication();
    const events = await keyEvents(replica, key);
    context.onTestFinished(() => events.close());
    const replicaClient = probe(replica, context);
    await group.master.pause();
    const attempt = await tryAcquire(client, options).catch((e: unknown) => e);
    expect(isQuorumLockError(attempt, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
    const endedAt = performance.now();
    await group.failover('kill');
    // The write of 60 s landed there, after the attempt had ended.
    await expect.poll(() => events.seen.find(([, event]) => event === write), { timeout: 15_000, interval: 50 }).toBeDefined();
    const [landedAt] = events.seen.find(([, event]) => event === write) as [number, string];
    expect(landedAt).toBeGreaterThan(endedAt);
    // The undo followed it: the key is gone within the bound (without it, for 60 s).
    await expect.poll(() => replicaClient.exists(key), { timeout: BOUND_MS, interval: 20 }).toBe(0);
    expect(performance.now() - landedAt, JSON.stringify(events.seen)).toBeLessThan(BOUND_MS + 500);
  });
});
