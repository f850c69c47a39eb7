import type { Cluster, Redis } from 'ioredis';
import {
  type Announce,
  acquire,
  acquireFenced,
  acquireInLine,
  extend,
  extendMany,
  fence,
  keepalive,
  leave,
  type LineEntry,
  type LuaScript,
  type LinePlace,
  type LineReply,
  type Rejoin,
  release,
  type RenewalEntry,
  type ScriptClient,
  type SetClient,
  verify,
} from '../scripts/index.js';
import { RedisPubSub } from './RedisPubSub.js';
import { coalesceWrites } from './coalesceWrites.js';
import { ConnectionGate } from './ConnectionGate.js';
import { assertFencingKeysShareSlot, assertSameHashSlot, bySlot } from './hashSlot.js';
import type { NodeBackend, SyncedReply } from './NodeBackend.js';
import { SyncConnections } from './SyncConnections.js';

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
  readonly synced: (<T>(write: (on: NodeBackend) => Promise<T>, replicas: number, timeoutMs: number) => Promise<SyncedReply<T>>) | undefined;
  private readonly scripts: ScriptClient & SetClient;
  private readonly isCluster: boolean;
  private readonly keyPrefix: string;
  readonly pubSub: RedisPubSub;

  constructor(
    private readonly client: RedisClient,
    name?: string,
  ) {
    this.scripts = client as unknown as ScriptClient & SetClient;
    const keyPrefix = (client.isCluster ? (client as Cluster).options.keyPrefix : (client as Redis).options.keyPrefix) ?? '';
    this.isCluster = client.isCluster === true;
    this.keyPrefix = keyPrefix;
    this.checkKeys = this.isCluster ? checkClusterKeys : undefined;
    if (this.isCluster) {
      this.synced = undefined;
    } else {
      // Opened at the first synced write: most lockers never sync.
      let connections: SyncConnections | undefined;
      this.synced = (write, replicas, timeoutMs) => {
        connections ??= new SyncConnections(client as Redis, (connection) => new RedisNodeBackend(connection, this.name));
        return connections.synced(write, replicas, timeoutMs);
      };
    }
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

  /** One script call per chunk of locks; on a cluster, per hash slot too (a script's keys must share one). */
  extendMany(entries: readonly RenewalEntry[]): Promise<boolean[]> {
    this.coalesce();
    if (!this.isCluster) return extendMany(this.scripts, entries);
    const groups = bySlot(entries, (entry) => this.keyPrefix + (entry.keys[0] as string));
    const results = new Array<boolean>(entries.length);
    const calls = [...groups.values()].map((indexes) =>
      extendMany(
        this.scripts,
        indexes.map((index) => entries[index] as RenewalEntry),
      ).then((held) => indexes.forEach((index, i) => (results[index] = held[i] === true))),
    );
    return Promise.all(calls).then(() => results);
  }

  verify(keys: readonly string[], value: string): Promise<number> {
    this.coalesce();
    return verify(this.scripts, keys, value);
  }

  release(keys: readonly string[], value: string, announce: Announce = 'marked', rejoin?: Rejoin): Promise<number> {
    this.coalesce();
    return release(this.scripts, keys, value, announce, rejoin);
  }

  runScript<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], read: (reply: unknown) => T): Promise<T> {
    this.coalesce();
    return script.run(this.scripts, keys, args, read);
  }

  private coalesce(): void {
    if (!this.isCluster) coalesceWrites(this.client as Redis);
  }
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
