/**
 * Locks on Sentinel-managed Redis, against real master, replica and sentinel
 * processes: what a failover does to a lock with and without replica sync.
 */
import { Redis } from 'ioredis';
import { describe, it, type TestContext } from 'vitest';
import { ErrorCode, isQuorumLockError, QuorumUnreachableError, RedisLock, ReplicaSyncError } from '../../src/index.js';
import { lockerClientOf } from '../support/clientSwap.js';
import { type FailoverKind, SentinelGroup } from '../support/SentinelGroup.js';
import { TcpProxy } from '../support/TcpProxy.js';

/** The lockers' client (test/support/clientSwap.ts); the two differ in what they say and resend. */
const TEST_CLIENT = process.env['QUORUMLOCK_TEST_CLIENT'] ?? 'ioredis';
const ON_NODE_REDIS = TEST_CLIENT.startsWith('node-redis');

/** A master and one replica that replicates through a proxy the test controls; the test's own, stopped when it finishes. */
async function startGroup({ onTestFinished }: TestContext): Promise<{ group: SentinelGroup; link: NonNullable<ReturnType<SentinelGroup['replicationLink']>> }> {
  const group = await SentinelGroup.start({ replicas: 1, proxiedReplication: true });
  onTestFinished(() => group.stop());
  const link = group.replicationLink(1);
  if (link === undefined) throw new Error('the replica has no replication proxy');
  return { group, link };
}

/** Node timeouts long enough for a replica 100 ms away; the WAIT ends well before them. */
const synced = { nodeTimeoutMs: 2000, syncReplicas: { replicas: 1, timeoutMs: 1500 } } as const;

/**
 * The master the locker's client is connected to. node-redis's Sentinel
 * client (6.3) learns of a failover only through its next rediscovery: its
 * sentinels' +sdown starts one, which fails while no master is named and
 * retries once a second; its pattern for +switch-master never matches.
 */
async function masterPortOf(client: Redis): Promise<number | undefined> {
  const locker = lockerClientOf(client);
  if (locker === client) {
    await client.ping();
    return client.stream?.remotePort;
  }
  const sentinel = locker as { readonly isReady: boolean; getMasterNode(): { port: number } | undefined };
  return sentinel.isReady ? sentinel.getMasterNode()?.port : undefined;
}

/** A node failed because its client replaced the connection before WAIT answered. */
function connectionReplaced(error: unknown): boolean {
  const cause = error instanceof QuorumUnreachableError ? error.outcomes[0]?.error : undefined;
  return isQuorumLockError(cause, ErrorCode.REPLICA_SYNC) && (cause as ReplicaSyncError).connectionChanged;
}

/** Each server's role, the key's value there, and who the sentinels name: what a failed check should print. */
async function whereHeld(group: SentinelGroup, key: string, value: string): Promise<string> {
  const servers = await Promise.all(
    group.servers.map(async (server) => {
      const held = await group.command(server, 'GET', key).catch((error: unknown) => String(error));
      const role = ((await group.command(server, 'ROLE').catch(() => [])) as unknown[])[0];
      return `${server.port} ${String(role)} ${held === value ? 'holds it' : `has ${String(held)}`}`;
    }),
  );
  const named = await Promise.all(group.sentinels.map((sentinel) => group.sentinelMaster(sentinel)));
  return `harness master ${group.master.port}; ${servers.join('; ')}; sentinels name ${named.map((a) => a?.port)} (config epoch ${await group.configEpoch()}); failovers ${JSON.stringify(group.failovers)}`;
}

/**
 * A synced tryAcquire of `resource` through a proxy of the master, whose
 * replica gets nothing more (its WAIT blocks until its timeout); once the
 * WAIT blocks on the master, every connection through the proxy is cut
 * and the proxy healed: ioredis resends what was unanswered on its next
 * connection, node-redis fails it. With `dropReplies` the write's own reply
 * is lost too (the locker's sync connection is opened before).
 */
async function cutOffWhileWaiting(
  context: TestContext,
  resource: string,
  { dropReplies }: { dropReplies: boolean },
): Promise<{ group: SentinelGroup; error: unknown; heldBeforeCut: boolean }> {
  const { group, link } = await startGroup(context);
  const proxy = await TcpProxy.start(group.master);
  const client = new Redis({ host: proxy.host, port: proxy.port, maxRetriesPerRequest: 1, retryStrategy: () => 10 });
  client.on('error', () => undefined);
  try {
    await client.ping();
    const locker = new RedisLock(client, { nodeTimeoutMs: 1500, syncReplicas: { replicas: 1, timeoutMs: 1000 } });
    // With replies dropped a connection could not finish opening: the sync connection is opened (and left idle) first.
    if (dropReplies) await (await locker.acquire(`${resource}:warm`, 10_000)).release();
    link.blackhole();
    if (dropReplies) proxy.dropReplies();
    const attempt = locker.tryAcquire(resource, 10_000).catch((e: unknown) => e);
    // Once the WAIT blocks on the master, the SET before it has run (a fixed 150 ms was a guess
    // that an event-loop stall, or the cases running beside this one, could beat).
    await context.expect.poll(() => blockedClients(group), { timeout: 1000, interval: 10 }).toBe(1);
    const heldBeforeCut = (await group.command(group.master, 'GET', resource)) !== null;
    proxy.cutOff();
    proxy.heal();
    return { group, error: await attempt, heldBeforeCut };
  } finally {
    client.disconnect();
    await proxy.close();
  }
}

/** The node failed because its connection was replaced before the write and its WAIT were answered on one. */
function expectReplacedConnection(expect: TestContext['expect'], error: unknown): void {
  expect(error).toBeInstanceOf(QuorumUnreachableError);
  const cause = (error as QuorumUnreachableError).outcomes[0]?.error;
  // node-redis resends nothing: what was pending on the closed connection fails with it.
  if (ON_NODE_REDIS) expect(cause?.message).toBe('Socket closed unexpectedly');
  else expect(cause).toMatchObject({ code: ErrorCode.REPLICA_SYNC, connectionChanged: true });
}

/** Clients of the master blocked in a command (a WAIT, here). */
async function blockedClients(group: SentinelGroup): Promise<number> {
  const info = (await group.command(group.master, 'INFO', 'clients')) as string;
  return Number(/^blocked_clients:(\d+)/m.exec(info)?.[1]);
}

describe.concurrent('a failover', () => {
  it('keeps a lock taken with syncReplicas: the promoted replica has the key, and another client is refused', async (context) => {
    const { expect } = context;
    const { group, link } = await startGroup(context);
    // Replication lags; without the WAIT the acquire would return before the replica has the key.
    link.latencyMs = 100;
    const holderClient = group.client();
    const lock = await new RedisLock(holderClient, synced).acquire('orders:1', 60_000);
    // Whatever was still on its way to the replica is lost with the master.
    link.cutOff();
    const { to } = await group.failover('kill');
    expect(to).toBe(1);
    expect(await group.command(group.master, 'GET', 'orders:1')).toBe(lock.value);
    const rival = new RedisLock(group.client());
    expect(await rival.tryAcquire('orders:1', 60_000)).toBeNull();
    // The holder goes on: its extend reaches the new master, whose new replica confirms it. Once its
    // client is there: a client still switching replaced its connection under the extend's WAIT in one
    // run, whose outcome is then unknown (REPLICA_SYNC with connectionChanged), as it should be.
    // There is the master of the group as settled now, not the one the harness saw after the induced
    // failover: sentinels on a busy machine may fail over again on their own (a CI run on node-redis found
    // its client ready on the restarted old server for 10 s; a failover made here by hand, unseen by the
    // harness, fails the old check). The synced key is on either; a failed wait prints where it is.
    const epoch = await group.configEpoch();
    const onSettledMaster = async (): Promise<boolean> => (await group.isSettled()) && (await masterPortOf(holderClient)) === group.master.port;
    await expect
      // As long as the harness gives a failover (failoverDeadlineMs): one made on its own settled 15 s later here.
      .poll(onSettledMaster, { timeout: 20_000, interval: 50 })
      .toBe(true)
      .catch(async (error: unknown) => {
        throw new Error(`the holder's client is on ${await masterPortOf(holderClient)}; ${await whereHeld(group, 'orders:1', lock.value)}`, { cause: error });
      });
    if ((await group.configEpoch()) > epoch) console.log(`the sentinels failed over on their own after the induced failover: ${await whereHeld(group, 'orders:1', lock.value)}`);
    // Once more if the client replaced its connection under the WAIT even so: at load 16-20 a node-redis
    // Sentinel client, already on the new master, rediscovered it again mid-extend (its WAIT answered after
    // 3.6 s of a 1.5 s timeout, held back by the client meanwhile). The unknown outcome is what it should
    // say; the holder then extends again. Any other failure, or the same one twice, fails the test.
    await lock.extend(60_000).catch(async (error: unknown) => {
      if (!connectionReplaced(error)) throw error;
      await lock.extend(60_000);
    });
    expect(lock.remainingMs()).toBeGreaterThan(50_000);
  }, 60_000);

  it('loses a lock taken without sync while replication was stalled: another client takes it after the failover', async (context) => {
    const { expect } = context;
    const { group, link } = await startGroup(context);
    link.blackhole();
    const lock = await new RedisLock(group.client(), { nodeTimeoutMs: 2000 }).acquire('orders:2', 60_000);
    expect(lock.remainingMs()).toBeGreaterThan(50_000);
    await group.failover('kill');
    expect(await group.command(group.master, 'GET', 'orders:2')).toBeNull();
    const rival = await new RedisLock(group.client()).tryAcquire('orders:2', 60_000);
    // Two holders of one lock: the failure syncReplicas guards against.
    expect(rival).not.toBeNull();
    expect(rival?.value).not.toBe(lock.value);
  });
});

describe.concurrent('syncReplicas against a real replica', () => {
  it('fails the node whose replica does not acknowledge in time, names the cause, and undoes the write', async (context) => {
    const { expect } = context;
    const { group, link } = await startGroup(context);
    link.blackhole();
    const client = group.client();
    const locker = new RedisLock(client, { nodeTimeoutMs: 500, syncReplicas: { replicas: 1, timeoutMs: 100 } });
    // The call measures the sync, not the first connection: a node-redis Sentinel client takes ~300 ms to
    // open its connections, and in one CI run (3 files at once) this case's cause was another error.
    await expect.poll(() => masterPortOf(client), { timeout: 10_000, interval: 20 }).toBe(group.master.port);
    const error = await locker.tryAcquire('orders:3', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    const cause = (error as QuorumUnreachableError).outcomes[0]?.error;
    expect(isQuorumLockError(cause, ErrorCode.REPLICA_SYNC), String(cause)).toBe(true);
    const sentinels = group.sentinelAddresses.map((a) => `${a.host}:${a.port}`);
    // node-redis keeps a Sentinel client's options private; its identity (6.3, and 5.12 as tested) shows the first sentinel.
    const node = ON_NODE_REDIS ? `Sentinel master via sentinels ${sentinels[0]}` : `${group.name} via sentinels ${sentinels.join(',')}`;
    expect((cause as ReplicaSyncError).message).toBe(`${node}: 0 of 1 replica acknowledged within 100 ms (WAIT answered after ${(cause as ReplicaSyncError).waitedMs} ms)`);
    expect((error as Error).message).toContain('0 of 1 replica acknowledged within 100 ms');
    expect(await group.command(group.master, 'GET', 'orders:3')).toBeNull();
  });

  it('does not count a WAIT that the client resent on a new connection, where it waits for nothing of ours', async (context) => {
    const { error } = await cutOffWhileWaiting(context, 'orders:4', { dropReplies: false });
    expectReplacedConnection(context.expect, error);
  });

  it('does not take a write resent on a new connection as refused: its first run stood, and is undone', async (context) => {
    const { expect } = context;
    // The write runs but its reply is lost with the connection: ioredis sends it again on the next
    // one, where the SET NX finds our own key and answers as if another held it (seen in a loaded run
    // of the case above, where the write's reply was still in the proxy when the connection went).
    const { group, error, heldBeforeCut } = await cutOffWhileWaiting(context, 'orders:5', { dropReplies: true });
    expect(heldBeforeCut).toBe(true);
    expectReplacedConnection(expect, error);
    // Undone, not left to block the resource for its TTL.
    await expect.poll(() => group.command(group.master, 'GET', 'orders:5'), { timeout: 2000, interval: 10 }).toBeNull();
  });

  it('sends the WAIT again when a script had to be resent after NOSCRIPT, since the first WAIT ran before it', async (context) => {
    const { expect } = context;
    const { group } = await startGroup(context);
    const locker = new RedisLock(group.client(), synced);
    await locker.tryAcquire(['a', 'b'], 10_000).then((lock) => lock?.release());
    await group.command(group.master, 'SCRIPT', 'FLUSH');
    await group.command(group.master, 'CONFIG', 'RESETSTAT');
    const lock = await locker.tryAcquire(['c', 'd'], 10_000);
    expect(lock).not.toBeNull();
    const stats = (await group.command(group.master, 'INFO', 'commandstats')) as string;
    expect(/cmdstat_wait:calls=(\d+)/.exec(stats)?.[1]).toBe('2');
  });
});

describe.concurrent('an ioredis Sentinel client', () => {
  it.for<FailoverKind>(['kill', 'pause'])('finds the new master after a failover (%s), and the next acquire works there', { timeout: 60_000 }, async (kind, context) => {
    const { expect } = context;
    const { group } = await startGroup(context);
    const locker = new RedisLock(group.client(), { nodeTimeoutMs: 200 });
    const before = await locker.acquire('jobs:1', 10_000);
    await before.release();
    // Inducing the failover is the harness's part: in one full-suite run on 2 busy cores the
    // sentinels did not promote the paused master's replica within the 20 s deadline (the old
    // master is resumed then, and the group is as before). One more try; what is tested follows.
    await group.failover(kind).catch(() => group.failover(kind));
    for (let tries = 1; ; tries++) {
      const epoch = await group.configEpoch();
      await group.waitUntilSettled();
      const lock = await locker.acquire('jobs:1', 10_000, { acquireTimeoutMs: 10_000 });
      // Wherever the group settled: in 3 of 9 runs here the sentinels (300 ms down-after on 2
      // busy cores) failed over once more while the group settled, back to the restarted old
      // server, which the harness then reports as the master. The client must follow either way.
      const onMaster = await group.command(group.master, 'GET', 'jobs:1');
      if (onMaster === lock.value) {
        await lock.release();
        return;
      }
      // The sentinels may also fail over on their own once the group has settled (a master
      // that missed their pings for the 1 s down-after on busy cores): the lock, taken without
      // syncReplicas, may then be lost with the old master's writes, or be on a master the
      // harness has not seen settle yet. That try shows nothing either way: made again, printed.
      const where = await whereHeld(group, 'jobs:1', lock.value);
      if ((await group.configEpoch()) > epoch && tries < 3) {
        console.log(`failover (${kind}), try ${tries}: the sentinels failed over on their own after the acquire (${where}); trying again`);
        await lock.release().catch(() => undefined);
        continue;
      }
      expect(onMaster, where).toBe(lock.value);
    }
  });
});
