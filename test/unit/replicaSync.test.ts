import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InvalidArgumentError,
  isQuorumLockError,
  type LockerOptions,
  QuorumUnreachableError,
  ReplicaSyncError,
} from '../../src/index.js';
import { resolveLockerOptions } from '../../src/lock/options.js';
import { LockNode } from '../../src/node/LockNode.js';
import type { NodeBackend, SyncedReply } from '../../src/node/NodeBackend.js';
import { QuorumCoordinator } from '../../src/redlock/QuorumCoordinator.js';
import { syncedTimeoutMs, waitTimeoutMs } from '../../src/node/replicaSync.js';

/** A node whose writes succeed (or find the key held), and whose replicas acknowledge `acknowledged` of them. */
interface FakeNode extends NodeBackend {
  acknowledged: number;
  reconnected: boolean;
  held: boolean;
  readonly log: string[];
}

function fakeNode(name: string, acknowledged: number, options: { held?: boolean; canSync?: boolean } = {}): FakeNode {
  const node: FakeNode = {
    name,
    acknowledged,
    reconnected: false,
    held: options.held ?? false,
    log: [],
    acquire: () => {
      node.log.push('acquire');
      return Promise.resolve(!node.held);
    },
    extend: () => {
      node.log.push('extend');
      return Promise.resolve(true);
    },
    release: () => {
      node.log.push('release');
      return Promise.resolve(1);
    },
  };
  if (options.canSync !== false) {
    node.synced = <T>(write: (on: NodeBackend) => Promise<T>, replicas: number, timeoutMs: number): Promise<SyncedReply<T>> => {
      const written = write(node);
      node.log.push(`wait ${replicas} ${timeoutMs}`);
      return written.then((reply) => (node.reconnected ? { reply, acknowledged: node.acknowledged, connectionChanged: true } : { reply, acknowledged: node.acknowledged }));
    };
  }
  return node;
}

class FakeLocker extends QuorumCoordinator {
  constructor(backends: readonly NodeBackend[], options: LockerOptions) {
    const settings = resolveLockerOptions({ wakeUp: false, reentrant: false, ...options });
    super(
      backends.map((backend) => new LockNode(backend, settings.clock)),
      settings,
    );
  }
}

const sync = { syncReplicas: { replicas: 1 } };

function argumentOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.argument;
    throw error;
  }
  return undefined;
}

describe('syncReplicas', () => {
  it('fails a granted node whose replicas did not acknowledge, names the shortfall, and undoes the write', async () => {
    const node = fakeNode('a:1', 0);
    const locker = new FakeLocker([node], sync);
    const error = await locker.tryAcquire('r', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    const cause = (error as QuorumUnreachableError).outcomes[0]?.error;
    expect(isQuorumLockError(cause, ErrorCode.REPLICA_SYNC)).toBe(true);
    expect(cause).toMatchObject({ node: 'a:1', acknowledged: 0, required: 1, timeoutMs: 25 });
    const waitedMs = (cause as ReplicaSyncError).waitedMs;
    expect(waitedMs).toBeTypeOf('number');
    expect(cause?.message).toBe(`a:1: 0 of 1 replica acknowledged within 25 ms (WAIT answered after ${waitedMs} ms)`);
    expect((error as Error).message).toContain('a:1: 0 of 1 replica acknowledged within 25 ms');
    // The key the node took must not outlive the failed attempt (Redlock rule 5).
    expect(node.log).toEqual(['acquire', 'wait 1 25', 'release']);
  });

  it('does not count an acknowledgement from a connection other than the writing one, and says so', async () => {
    const node = fakeNode('a:1', 1);
    node.reconnected = true;
    const error = await new FakeLocker([node], sync).tryAcquire('r', 1000).catch((e: unknown) => e);
    const cause = (error as QuorumUnreachableError).outcomes[0]?.error;
    expect(cause).toMatchObject({ code: ErrorCode.REPLICA_SYNC, connectionChanged: true, acknowledged: 1 });
    expect(cause?.message).toBe('a:1: the connection was replaced before WAIT answered, so whether 1 replica has the write is unknown');
    expect(node.log.at(-1)).toBe('release');
  });

  it('does not take a refusal answered on a replaced connection as held: the write may have run before its resend, and is undone', async () => {
    // ioredis resends an unanswered SET NX after a reconnect; where its first run stood, the resend finds our own key.
    const node = fakeNode('a:1', 1, { held: true });
    node.reconnected = true;
    const error = await new FakeLocker([node], sync).tryAcquire('r', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    expect((error as QuorumUnreachableError).outcomes[0]?.error).toMatchObject({ code: ErrorCode.REPLICA_SYNC, connectionChanged: true });
    expect(node.log.at(-1)).toBe('release');
  });

  it('counts a grant once enough replicas acknowledged it', async () => {
    const node = fakeNode('a:1', 2);
    const locker = new FakeLocker([node], { syncReplicas: { replicas: 2, timeoutMs: 10 } });
    const lock = await locker.tryAcquire('r', 1000);
    expect(lock).not.toBeNull();
    expect(node.log).toEqual(['acquire', 'wait 2 10']);
    await lock?.release();
  });

  it('reports a key held elsewhere as held, not as a short sync: nothing was written', async () => {
    const locker = new FakeLocker([fakeNode('a:1', 0, { held: true })], sync);
    await expect(locker.tryAcquire('r', 1000)).resolves.toBeNull();
  });

  it('on Redlock, outvotes a minority whose sync fell short and still releases there', async () => {
    const nodes = [fakeNode('a:1', 1), fakeNode('b:1', 0), fakeNode('c:1', 1)];
    const lock = await new FakeLocker(nodes, sync).tryAcquire('r', 1000);
    expect(lock).not.toBeNull();
    await lock?.release();
    expect(nodes.map((n) => n.log.at(-1))).toEqual(['release', 'release', 'release']);
  });

  it('on Redlock, releases on every node when a majority fell short', async () => {
    const nodes = [fakeNode('a:1', 0), fakeNode('b:1', 0), fakeNode('c:1', 1)];
    const error = await new FakeLocker(nodes, sync).tryAcquire('r', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    expect((error as QuorumUnreachableError).outcomes.filter((o) => o.error instanceof ReplicaSyncError)).toHaveLength(2);
    expect(nodes.map((n) => n.log.at(-1))).toEqual(['release', 'release', 'release']);
  });

  it('makes an extend wait for the replicas too', async () => {
    const node = fakeNode('a:1', 1);
    const lock = await new FakeLocker([node], sync).tryAcquire('r', 1000);
    node.acknowledged = 0;
    const error = await lock?.extend(1000).catch((e: unknown) => e);
    expect(isQuorumLockError(error, ErrorCode.QUORUM_UNREACHABLE)).toBe(true);
    expect((error as QuorumUnreachableError).outcomes[0]?.error).toBeInstanceOf(ReplicaSyncError);
    expect(node.log.slice(0, 4)).toEqual(['acquire', 'wait 1 25', 'extend', 'wait 1 25']);
    await lock?.release();
  });

  it('leaves room in a request timeout cut short by a small TTL for the round trip and two server ticks', async () => {
    const node = fakeNode('a:1', 1);
    const options = { syncReplicas: { replicas: 1, timeoutMs: 100, serverTickMs: 10 }, nodeTimeoutMs: 20, driftMs: 0, driftFactor: 0 };
    // The request has min(20 + 100 + 2 × 10, TTL 80) = 80 ms: 80 - 20 - 2 × 10 are left for WAIT.
    const lock = await new FakeLocker([node], options).tryAcquire('r', 80);
    expect(node.log[1]).toBe('wait 1 40');
    await lock?.release();
  });

  it('gives a synced request the node timeout plus the WAIT timeout plus two server ticks', () => {
    const sync = resolveLockerOptions({ syncReplicas: { replicas: 1 } }).syncReplicas!;
    // The defaults, on a server with hz 10: 50 + 25 + 2 × 100.
    expect(syncedTimeoutMs(50, sync)).toBe(275);
    expect(waitTimeoutMs(275, 50, sync)).toBe(25);
    expect(waitTimeoutMs(260, 50, sync)).toBe(10);
    expect(waitTimeoutMs(60, 50, sync)).toBe(1);
  });

  it('sends no WAIT when off', async () => {
    const node = fakeNode('a:1', 0);
    const lock = await new FakeLocker([node], {}).tryAcquire('r', 1000);
    expect(node.log).toEqual(['acquire']);
    await lock?.release();
  });

  it('is refused for a node that cannot wait for replicas', () => {
    expect(argumentOf(() => new FakeLocker([fakeNode('a:1', 1, { canSync: false })], sync))).toBe('options.syncReplicas');
  });

  it('validates its fields, each by name', () => {
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 0 } }))).toBe('options.syncReplicas.replicas');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: {} }))).toBe('options.syncReplicas.replicas');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 1, timeoutMs: 2.5 } }))).toBe('options.syncReplicas.timeoutMs');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 1, serverTickMs: 1 } }))).toBe('options.syncReplicas.serverTickMs');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 1, serverTickMs: 1001 } }))).toBe('options.syncReplicas.serverTickMs');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 1, timeoutMs: 0 } }))).toBe('options.syncReplicas.timeoutMs');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: { replicas: 1, wait: 5 } }))).toBe('options.syncReplicas.wait');
    expect(argumentOf(() => resolveLockerOptions({ syncReplicas: 1 }))).toBe('options.syncReplicas');
  });

  it('defaults the WAIT timeout to half the node timeout', () => {
    expect(resolveLockerOptions({ syncReplicas: { replicas: 2 } }).syncReplicas).toEqual({ replicas: 2, timeoutMs: 25, serverTickMs: 100 });
    expect(resolveLockerOptions({ nodeTimeoutMs: 9, syncReplicas: { replicas: 1 } }).syncReplicas).toEqual({ replicas: 1, timeoutMs: 4, serverTickMs: 100 });
    expect(resolveLockerOptions({ nodeTimeoutMs: 1, syncReplicas: { replicas: 1 } }).syncReplicas).toEqual({ replicas: 1, timeoutMs: 1, serverTickMs: 100 });
    expect(resolveLockerOptions({}).syncReplicas).toBeUndefined();
  });
});
