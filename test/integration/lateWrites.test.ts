/**
 * A request that timed out is still run later: ioredis resends the commands
 * that had no answer once it reconnects, after a Sentinel failover on the
 * promoted replica. Against real Sentinel groups (servers at the default hz
 * 10): such a late write must not keep a key alive past its holder's
 * validity once the holder released or its lock ended.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, isQuorumLockError, RedisLock } from '../../src/index.js';
import type { RedisServer } from '../support/RedisServer.js';
import { SentinelGroup } from '../support/SentinelGroup.js';

let group: SentinelGroup | undefined;

/**
 * The holder's client keeps its unanswered commands through every reconnect
 * of the failover. With the harness's maxRetriesPerRequest 1, the first
 * refused reconnect rejects them instead (ioredis flushes its old command
 * queue, which is still the one kept for resending), and nothing is
 * replayed; with ioredis's default of 20 they are replayed whenever the
 * failover takes fewer reconnects than that, as it mostly does.
 */
const replaying = { maxRetriesPerRequest: null };

afterEach(async () => {
  await group?.stop();
  group = undefined;
});

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

/** Polls the key's PTTL on `server` every 20 ms. */
function watchKey(group: SentinelGroup, server: RedisServer, key: string, longerThanMs: number): KeyWatch {
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
      const pttl = (await group.command(server, 'PTTL', key).catch(() => -3)) as number;
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

async function commandCalls(group: SentinelGroup, server: RedisServer, command: string): Promise<number> {
  const stats = (await group.command(server, 'INFO', 'commandstats')) as string;
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

describe('a write that timed out and runs after a failover', () => {
  it.each([false, true])('an extend replayed on the promoted replica does not keep the key past the lock\'s end (syncReplicas %s)', async (sync) => {
    // Sentinels' down-after above the harness's 300 ms: after +switch-master a sentinel's new
    // link to the promoted master stayed disconnected 260-450 ms (SENTINEL MASTER said so while
    // the server answered other clients in under 30 ms), so with 300 ms the sentinels often
    // marked it o_down and failed over to the just-restarted old master and back. That one was
    // left a second master until +convert-to-slave ~10 s later; the holder's client stayed on
    // it, and the lock's end release deleted the key there, not on the master that kept the
    // replayed extend (the synced case's timing hit this in most runs here, the unsynced one in none).
    group = await SentinelGroup.start({ replicas: 1, downAfterMs: 1500 });
    const replica = group.servers[1] as RedisServer;
    const client = group.client(replaying);
    const locker = new RedisLock(client, { nodeTimeoutMs: 200, ...(sync ? { syncReplicas: { replicas: 1 } } : {}) });
    // Long enough for the key to outlast a slow failover (up to 20 s here when an election
    // failed): an extend replayed after the key expired finds nothing to extend.
    const ttlMs = 10_000;
    const lock = await locker.acquire('orders:1', ttlMs);
    await group.waitForReplication();
    await group.master.pause();
    const extend = await lock.extend(30_000).catch((e: unknown) => e);
    expect(isQuorumLockError(extend, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
    const watch = watchKey(group, replica, 'orders:1', ttlMs);
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
    const pttl = await group.command(replica, 'PTTL', 'orders:1');
    // The release the lock's end sent (release() returns it), to explain a failure.
    const released = await (await lock.release()).settled;
    const servers = await Promise.all(
      (group as SentinelGroup).servers.map(async (server) => ({
        port: server.port,
        role: ((await (group as SentinelGroup).command(server, 'ROLE').catch(() => ['?'])) as unknown[])[0],
        pttl: await (group as SentinelGroup).command(server, 'PTTL', 'orders:1').catch(() => '?'),
      })),
    );
    const sentinels = await Promise.all((group as SentinelGroup).sentinels.map((sentinel) => (group as SentinelGroup).sentinelMaster(sentinel)));
    const times = { validUntil: lock.validUntil, firstLateAt: watch.firstLateAt, lastSeenAt: watch.lastSeenAt, now: performance.now(), released, servers, sentinels, failovers: (group as SentinelGroup).failovers, changes: watch.changes };
    expect(pttl, JSON.stringify(times)).toBeLessThan(0);
    expect((watch.lastSeenAt ?? 0) - Math.max(lock.validUntil, watch.firstLateAt ?? 0)).toBeLessThan(BOUND_MS);
  }, 90_000);

  // Unsynced only: a synced attempt's SET goes on a sync connection and its undo on the user's,
  // so a replayed SET can land after the undo and keep the key until its TTL (README, Late
  // writes). Sending the undo again after the SET was tried and deleted a later attempt's key
  // (attempts of one acquire share a value): the model-based property test caught it.
  it.each([false])('an acquire replayed on the promoted replica is released after it (syncReplicas %s)', async (sync) => {
    group = await SentinelGroup.start({ replicas: 1 });
    const replica = group.servers[1] as RedisServer;
    const client = group.client(replaying);
    const locker = new RedisLock(client, { nodeTimeoutMs: 200, ...(sync ? { syncReplicas: { replicas: 1 } } : {}) });
    // Connections open (the sync ones too) before the master stops answering.
    await (await locker.acquire('warm', 10_000)).release();
    await group.waitForReplication();
    await group.command(replica, 'CONFIG', 'RESETSTAT');
    await group.master.pause();
    const attempt = await locker.tryAcquire('orders:2', 60_000).catch((e: unknown) => e);
    expect(isQuorumLockError(attempt, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
    const watch = watchKey(group, replica, 'orders:2', 0);
    const failedAt = performance.now();
    await group.failover('kill');
    await expect.poll(() => commandCalls(group as SentinelGroup, replica, 'set'), { timeout: 10_000, interval: 50 }).toBeGreaterThan(0);
    await sleep(BOUND_MS);
    await watch.stop();
    // The SET NX of 60 s landed there, after the attempt had failed; the release followed it.
    expect(await group.command(replica, 'GET', 'orders:2')).toBeNull();
    expect(await new RedisLock(group.client()).tryAcquire('orders:2', 1000)).not.toBeNull();
    if (watch.lastSeenAt !== undefined) expect(watch.lastSeenAt).toBeGreaterThan(failedAt);
  }, 90_000);
});
