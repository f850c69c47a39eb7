import type { Cluster, Redis } from 'ioredis';
import type { ClientAdapter, SyncSource } from '../ClientAdapter.js';
import { coalesceWrites } from '../coalesceWrites.js';
import type { PubSubConnection } from '../PubSub.js';

/**
 * An ioredis client, standalone (also Sentinel-managed) or cluster, as users
 * pass it to quorumlock: described by its shape, so that quorumlock's types
 * do not need ioredis installed (node-redis users have no ioredis).
 */
export interface IoredisClient {
  /** The connection's status (`'wait'`, `'connecting'`, `'ready'`, `'end'`, …). */
  readonly status: string;
  /** True for an ioredis `Cluster`. */
  readonly isCluster: boolean;
  /** Runs a cached script by its SHA1 (scripts are sent with eval after NOSCRIPT). */
  evalsha(sha: string, numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  /** Runs a script by its source. */
  eval(source: string, numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  /** A new connection with the same options: the subscriber for wake-ups. */
  duplicate(): unknown;
}

/** ioredis runs scripts as evalsha/eval and takes status and events as they are: the adapter hands them through. */
export function isIoredisClient(value: unknown): value is IoredisClient {
  const candidate = value as { evalsha?: unknown; eval?: unknown; status?: unknown } | null | undefined;
  return typeof candidate?.evalsha === 'function' && typeof candidate.eval === 'function' && typeof candidate.status === 'string';
}

export function ioredisAdapter(user: IoredisClient): ClientAdapter {
  const client = user as unknown as Redis | Cluster;
  const isCluster = client.isCluster === true;
  return {
    name: describeClient(client),
    isCluster,
    keyPrefix: (isCluster ? (client as Cluster).options.keyPrefix : (client as Redis).options.keyPrefix) ?? '',
    connecting: client as Redis,
    commands: client as unknown as ClientAdapter['commands'],
    beforeWrite: isCluster ? undefined : () => coalesceWrites(client as Redis),
    // Set by ioredis once a QUIT (or another command that disconnects) is written, until the connection ends.
    closing: isCluster ? undefined : () => (client as unknown as { manuallyClosing?: boolean }).manuallyClosing === true,
    wait: isCluster ? undefined : (replicas, timeoutMs) => (client as Redis).wait(replicas, timeoutMs),
    syncSource: isCluster ? undefined : syncSourceOf(client as Redis),
    connectionMark: () => (client as Redis).stream,
    subscriber: () => subscriberOf(client),
  };
}

function syncSourceOf(client: Redis): SyncSource {
  return {
    ended: () => client.status === 'end',
    onEnd: (listener) => void client.on('end', listener),
    open: () => {
      // The offline queue keeps a write made while the connection opens, whatever the user's client does.
      const connection = client.duplicate({ enableOfflineQueue: true });
      connection.on('error', () => undefined);
      return {
        client: connection,
        wait: (replicas, timeoutMs) => connection.wait(replicas, timeoutMs),
        mark: () => connection.stream,
        close: () => connection.disconnect(),
      };
    },
  };
}

function subscriberOf(client: Redis | Cluster): PubSubConnection {
  // ioredis's own resubscribe after a reconnect leaves its failure unhandled
  // (a closed connection, a NOPERM from ACLs), which would crash the process;
  // the subscriber resubscribes instead (onReady), where a failure is
  // harmless. No ready check: SUBSCRIBE is served while a node loads its
  // data, and the check's INFO was 40% of the CPU that opening these
  // connections cost, paid by every process at its first contention, when
  // its waiters are busiest.
  const connection = (client as Redis).duplicate({ autoResubscribe: false, enableReadyCheck: false });
  // Errors surface as timeouts of the subscriptions; callers fall back on polling.
  connection.on('error', () => undefined);
  return {
    subscribe: (...channels) => connection.subscribe(...channels),
    unsubscribe: (...channels) => connection.unsubscribe(...channels),
    onMessage: (listener) => connection.on('message', listener),
    onReady: (listener) => connection.on('ready', listener),
    disconnect: () => connection.disconnect(),
  };
}

function describeClient(client: Redis | Cluster): string {
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

export function describeSeed(seed: unknown): string {
  if (typeof seed === 'string' || typeof seed === 'number') return String(seed);
  const { host, port } = (seed ?? {}) as { host?: string; port?: number };
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}
