import type { ScriptClient } from '../scripts/LuaScript.js';
import type { SetClient } from '../scripts/acquire.js';
import type { ConnectingClient } from './ConnectionGate.js';
import type { PubSubConnection } from './PubSub.js';

/**
 * The adapter contract: what one Redis client library must supply so that
 * the node layer above it (RedisNodeBackend, RedisPubSub, ConnectionGate,
 * the scripts with their NOSCRIPT fallback, WAIT, the Cluster key checks)
 * works on it unchanged. An adapter only translates; it decides nothing
 * about locks. One file per client under adapters/, picked by the client's
 * shape in adapterFor.ts.
 *
 * Replies are those of RESP2 as ioredis gives them: integers as numbers,
 * bulk strings as strings, nil as null, arrays as arrays; an error reply
 * rejects with an Error whose message starts with the Redis error code
 * (NOSCRIPT …), which is how the script fallback recognizes it.
 */
export interface ClientAdapter {
  /**
   * Runs scripts and SET as ioredis does (for ioredis, the client itself:
   * no call in between on the lock's hot path).
   */
  readonly commands: ScriptClient & SetClient;
  /** The node's label in outcomes and errors (`host:port`, `cluster(…)`, `name via sentinels …`). */
  readonly name: string;
  /** A Redis Cluster: keys are checked for one hash slot, and WAIT is not offered. */
  readonly isCluster: boolean;
  /** What the client puts in front of every key (ioredis keyPrefix), for channel names; '' for none. */
  readonly keyPrefix: string;
  /**
   * The client's connection state and events as ConnectionGate reads them:
   * `status` 'ready' once commands go out, 'wait' for a client that
   * connects when asked (connect()), 'end' or 'close' for one that never will
   * by itself; 'error', 'ready' and 'end' events.
   */
  readonly connecting: ConnectingClient;
  /**
   * Called right before each lock command is sent; may hold the socket's
   * writes until the tick ends, so concurrent commands share one write
   * (coalesceWrites.ts). Absent where the client batches by itself.
   */
  readonly beforeWrite: (() => void) | undefined;
  /**
   * True once the user has asked the client to close (ioredis: a QUIT has
   * been written): a command written now goes out behind the QUIT, and the
   * server's close can fail its write (EPIPE), which takes the QUIT's own
   * reply with it and rejects the user's quit(). Absent where the client
   * refuses commands after close by itself.
   */
  readonly closing?: () => boolean;
  /**
   * Redis WAIT on the connection the last write went out on, right behind
   * it; undefined when the client cannot promise that (a cluster sends WAIT
   * to any master, a pool to any connection).
   */
  readonly wait: ((replicas: number, timeoutMs: number) => Promise<number>) | undefined;
  /**
   * Opens connections of the client's own kind, with its options, that
   * carry the synced writes (SyncConnections.ts), so that a WAIT blocks
   * only a connection of its own; undefined: a synced write and its WAIT go
   * on the user's connection, right behind each other (`wait`).
   */
  readonly syncSource: SyncSource | undefined;
  /** Changes whenever the client replaces its connection: a WAIT answered on another one proves nothing. */
  connectionMark(): unknown;
  /** A new connection of its own for SUBSCRIBE, closed by its disconnect(); undefined: waiters poll. */
  readonly subscriber: (() => PubSubConnection) | undefined;
}

/** Where synced writes get connections of their own: duplicates of the user's client. */
export interface SyncSource {
  /** The user's client has ended for good: no connection is opened any more. */
  ended(): boolean;
  /** Called once the user's client ends: its duplicates close too. */
  onEnd(listener: () => void): void;
  /**
   * A new connection, duplicated from the user's client with its options;
   * a write made while it opens (or reopens) waits for it.
   */
  open(): SyncConnection;
}

export interface SyncConnection {
  /** The duplicated client, which a RedisNodeBackend runs the writes on. */
  readonly client: object;
  /** Redis WAIT on this connection. */
  wait(replicas: number, timeoutMs: number): Promise<number>;
  /** Changes whenever the connection is replaced (as ClientAdapter.connectionMark). */
  mark(): unknown;
  /** Its writes and their WAIT have answered, and none follow yet: what it holds of a pool goes back. */
  idle?(): void;
  close(): void;
}
