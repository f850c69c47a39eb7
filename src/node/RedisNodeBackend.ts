import type { Cluster, Redis } from 'ioredis';
import {
  type Announce,
  acquire,
  acquireFenced,
  acquireInLine,
  extend,
  fence,
  inspectKey,
  keepalive,
  type KeyState,
  leave,
  type LineEntry,
  type LinePlace,
  type LineReply,
  type Rejoin,
  release,
  type ScriptClient,
  scriptResends,
  type SetClient,
  verify,
} from '../scripts/index.js';
import { RedisPubSub } from './RedisPubSub.js';
import { coalesceWrites } from './coalesceWrites.js';
import { ConnectionGate } from './ConnectionGate.js';
import { assertFencingKeysShareSlot, assertSameHashSlot } from './hashSlot.js';
import type { NodeBackend, SyncedReply } from './NodeBackend.js';

/** An ioredis client, standalone or cluster, as users pass it to quorumlock. */
export type RedisClient = Redis | Cluster;

/** Runs the lock scripts on one ioredis client. */
export class RedisNodeBackend implements NodeBackend {
  readonly name: string;
  readonly connection: ConnectionGate;
  /**
   * Only a cluster has keys to check; on a standalone node it is undefined,
   * so lockers make no call at all for it on every acquire.
   */
  readonly checkKeys: ((keys: readonly string[], argument: string, fencing: boolean) => void) | undefined;
  /**
   * Undefined on a cluster: WAIT names no key, so a Cluster client would
   * send it to any master, not to the one that took the write.
   */
  readonly synced: (<T>(write: () => Promise<T>, replicas: number, timeoutMs: number) => Promise<SyncedReply<T>>) | undefined;
  private readonly scripts: ScriptClient & SetClient;
  private readonly isCluster: boolean;
  readonly pubSub: RedisPubSub;

  constructor(
    private readonly client: RedisClient,
    name?: string,
  ) {
    this.scripts = client as unknown as ScriptClient & SetClient;
    const keyPrefix = (client.isCluster ? (client as Cluster).options.keyPrefix : (client as Redis).options.keyPrefix) ?? '';
    this.isCluster = client.isCluster === true;
    this.checkKeys = this.isCluster ? checkClusterKeys : undefined;
    this.synced = this.isCluster ? undefined : (write, replicas, timeoutMs) => syncedOn(client as Redis, write, replicas, timeoutMs);
    this.name = name ?? describeClient(client);
    this.pubSub = new RedisPubSub(client, this.name, keyPrefix);
    this.connection = new ConnectionGate(client, this.name);
  }

  acquire(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    this.coalesce();
    return acquire(this.scripts, keys, value, ttlMs);
  }

  acquireFenced(keys: readonly string[], value: string, ttlMs: number): Promise<bigint[] | null> {
    this.coalesce();
    return acquireFenced(this.scripts, keys, value, ttlMs);
  }

  acquireInLine(keys: readonly string[], value: string, ttlMs: number, fencing: boolean, place: LinePlace): Promise<LineReply> {
    this.coalesce();
    return acquireInLine(this.scripts, keys, value, ttlMs, fencing, place);
  }

  keepalive(entries: readonly LineEntry[], leaseMs: number): Promise<number> {
    // On a cluster the entries' keys lie in different slots: one request each.
    if (!this.isCluster) return keepalive(this.scripts, entries, leaseMs);
    return Promise.all(entries.map((entry) => keepalive(this.scripts, [entry], leaseMs))).then((kept) => kept.reduce((a, b) => a + b, 0));
  }

  leave(keys: readonly string[], value: string, acquired: boolean): Promise<number> {
    return leave(this.scripts, keys, value, acquired);
  }

  fence(keys: readonly string[], value: string, tokens: readonly bigint[]): Promise<boolean> {
    this.coalesce();
    return fence(this.scripts, keys, value, tokens);
  }

  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    this.coalesce();
    return extend(this.scripts, keys, value, ttlMs);
  }

  verify(keys: readonly string[], value: string): Promise<number> {
    this.coalesce();
    return verify(this.scripts, keys, value);
  }

  inspect(resources: readonly string[]): Promise<readonly KeyState[]> {
    // One request per resource: on a cluster the resources may lie in different slots.
    return Promise.all(resources.map((resource) => inspectKey(this.scripts, resource)));
  }

  release(keys: readonly string[], value: string, announce: Announce = 'marked', rejoin?: Rejoin): Promise<number> {
    this.coalesce();
    return release(this.scripts, keys, value, announce, rejoin);
  }

  private coalesce(): void {
    if (!this.isCluster) coalesceWrites(this.client as Redis);
  }
}

/**
 * The write and the WAIT leave back to back, in one socket write when the
 * connection is busy, so the sync costs no extra round trip of ours. WAIT
 * only covers writes of its own connection: a script resent after NOSCRIPT
 * runs behind the first WAIT, which is then sent again once the write has
 * answered; and when the client reconnected meanwhile (ioredis resends an
 * unanswered WAIT on the new connection, where it waits for nothing) the
 * acknowledgement proves nothing and is not counted.
 */
function syncedOn<T>(client: Redis, write: () => Promise<T>, replicas: number, timeoutMs: number): Promise<SyncedReply<T>> {
  const connection = client.stream;
  const resendsBefore = scriptResends();
  const written = write();
  const acknowledged = client.wait(replicas, timeoutMs);
  return Promise.all([written, acknowledged])
    .then(([reply, count]) =>
      scriptResends() === resendsBefore ? { reply, acknowledged: count } : client.wait(replicas, timeoutMs).then((again) => ({ reply, acknowledged: again })),
    )
    .then((synced): SyncedReply<T> => (client.stream === connection ? synced : { ...synced, connectionChanged: true }));
}

/** On a cluster, a lock's keys (and with fencing their counters) must share one hash slot. */
function checkClusterKeys(keys: readonly string[], argument: string, fencing: boolean): void {
  assertSameHashSlot(keys, argument);
  if (fencing) assertFencingKeysShareSlot(keys, argument);
}

function describeClient(client: RedisClient): string {
  if (client.isCluster) {
    // ioredis keeps the seed nodes in a field its types mark private; they name the cluster.
    const seeds = (client as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
    return `cluster(${seeds.map(describeSeed).join(',')})`;
  }
  const { host, port, path, sentinels, name } = (client as Redis).options;
  // A Sentinel client's host and port are ioredis's defaults, not the master's: it is named by what finds the master.
  if (sentinels && sentinels.length > 0) return `${name ?? 'mymaster'} via sentinels ${sentinels.map(describeSeed).join(',')}`;
  return path ? `unix:${path}` : `${host ?? 'localhost'}:${port ?? 6379}`;
}

function describeSeed(seed: unknown): string {
  if (typeof seed === 'string' || typeof seed === 'number') return String(seed);
  const { host, port } = (seed ?? {}) as { host?: string; port?: number };
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}
