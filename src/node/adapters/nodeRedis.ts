import type { ClientAdapter, SyncSource } from '../ClientAdapter.js';
import type { ConnectingClient } from '../ConnectionGate.js';
import type { PubSubConnection } from '../PubSub.js';
import { describeSeed } from './ioredis.js';
import { type LeasingSentinel, sentinelLeaseSource } from './nodeRedisSentinelLeases.js';

type Listener = (...args: unknown[]) => void;
type Message = (message: string, channel: string) => void;

/** What node-redis clients of every kind share, as far as quorumlock uses it (v5 and v6; v4 has the same shape). */
interface NodeRedisBase {
  readonly isOpen: boolean;
  /** Absent on a v5 cluster: ready once it knows its masters (see isReady). */
  readonly isReady?: boolean;
  once(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  on(event: string, listener: Listener): unknown;
}

/** What a subscriber connection is used for; left out of the client types above, whose listener types differ by kind and major. */
interface Subscribing {
  subscribe(channels: string[], listener: Message): Promise<unknown>;
  unsubscribe(channels: string[], listener: Message): Promise<unknown>;
}

/** createClient(). */
export interface NodeRedisStandalone extends NodeRedisBase {
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeRedisStandalone;
  connect(): Promise<unknown>;
}

/** createCluster(). */
export interface NodeRedisCluster extends NodeRedisBase {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  nodeClient(node: never): Promise<unknown>;
  duplicate(): NodeRedisCluster;
  connect(): Promise<unknown>;
}

/** createSentinel(). */
export interface NodeRedisSentinel extends NodeRedisBase {
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  getMasterNode(): unknown;
  /** Absent in v5: subscriptions then share the sentinel client's own pub/sub connection. */
  duplicate?(): NodeRedisSentinel;
  connect(): Promise<unknown>;
}

/** A node-redis client as users pass it to quorumlock: createClient, createCluster or createSentinel. */
export type NodeRedisClient = NodeRedisStandalone | NodeRedisCluster | NodeRedisSentinel;

/** node-redis clients send raw commands with sendCommand and say whether they are open (ioredis has neither). */
export function isNodeRedisClient(value: unknown): value is NodeRedisClient {
  const candidate = value as Partial<NodeRedisBase & Subscribing & { sendCommand: unknown; duplicate: unknown }> | null | undefined;
  return (
    typeof candidate?.sendCommand === 'function' &&
    typeof candidate.isOpen === 'boolean' &&
    typeof candidate.subscribe === 'function'
  );
}

function isCluster(client: NodeRedisClient): client is NodeRedisCluster {
  return typeof (client as Partial<NodeRedisCluster>).nodeClient === 'function';
}

function isSentinel(client: NodeRedisClient): client is NodeRedisSentinel {
  return typeof (client as Partial<NodeRedisSentinel>).getMasterNode === 'function';
}

/** Options as node-redis keeps them: `options` on a client, `_options` on a cluster or sentinel. */
interface SeenOptions {
  readonly url?: string;
  readonly socket?: { readonly host?: string; readonly port?: number; readonly path?: string };
  readonly keyPrefix?: string | Buffer;
  readonly rootNodes?: readonly { readonly url?: string; readonly socket?: { host?: string; port?: number } }[];
  readonly name?: string;
  readonly sentinelRootNodes?: readonly { host?: string; port?: number }[];
  readonly masterPoolSize?: number;
}

function optionsOf(client: NodeRedisClient): SeenOptions {
  const seen = client as unknown as { options?: SeenOptions; _options?: SeenOptions };
  return seen.options ?? seen._options ?? {};
}

/**
 * node-redis: every command goes out raw (sendCommand), in the form the
 * scripts use with ioredis, so no command of node-redis's own typed API,
 * which changed between majors, is needed. Raw commands skip node-redis's
 * keyPrefix: the adapter puts it in front of the keys itself, as ioredis does.
 */
export function nodeRedisAdapter(client: NodeRedisClient): ClientAdapter {
  const options = optionsOf(client);
  const keyPrefix = prefixOf(client, options);
  const send = senderOf(client);
  const cluster = isCluster(client);
  const sentinel = isSentinel(client);
  let changes = 0;
  if (sentinel) {
    // A sentinel client hides its connections: a reconnect or a new master is the change a WAIT must not span.
    // A replica or sentinel coming or going is not: it leaves the master connection as it was, and counting
    // it failed a synced extend after a failover (the old master coming back as a replica).
    client.on('reconnecting', () => void changes++);
    client.on('topology-change', (event: unknown) => {
      if ((event as { type?: unknown } | undefined)?.type === 'MASTER_CHANGE') changes++;
    });
  }
  const epoch = (): unknown => (sentinel ? changes : socketMark(client));
  const adapter: ClientAdapter = {
    name: describeClient(client, options),
    isCluster: cluster,
    keyPrefix,
    connecting: connectingOf(client),
    commands: commandsOf(send, keyPrefix),
    // node-redis writes the commands of one tick in one corked write by itself.
    beforeWrite: undefined,
    wait: cluster || !waitsInOrder(client, sentinel, options) ? undefined : (replicas, timeoutMs) => send(['WAIT', String(replicas), String(timeoutMs)]).then(Number),
    syncSource: undefined,
    connectionMark: epoch,
    subscriber: () => subscriberOf(client),
  };
  if (cluster || !waitsInOrder(client, sentinel, options)) return adapter;
  // A sentinel client's duplicate would bring a pool and sentinels of its own: its synced writes take leases of its pool instead.
  const syncSource = sentinel
    ? sentinelLeaseSource(
        client as unknown as LeasingSentinel,
        (leased) => ({ ...adapter, commands: commandsOf(leased, keyPrefix), wait: undefined, subscriber: undefined }),
        epoch,
      )
    : syncSourceOf(client as NodeRedisStandalone);
  return { ...adapter, syncSource };
}

/** Scripts and SET as raw commands, with the client's key prefix put in front of the keys. */
function commandsOf(send: (args: string[], firstKey?: string) => Promise<unknown>, keyPrefix: string): ClientAdapter['commands'] {
  const withKeys = (command: string, head: string, numberOfKeys: number, keysAndArgs: readonly (string | number)[]): Promise<unknown> => {
    const args = [command, head, String(numberOfKeys)];
    for (let i = 0; i < keysAndArgs.length; i++) args.push(i < numberOfKeys ? keyPrefix + String(keysAndArgs[i]) : String(keysAndArgs[i]));
    return send(args, numberOfKeys > 0 ? args[3] : undefined);
  };
  return {
    evalsha: (sha, numberOfKeys, ...keysAndArgs) => withKeys('EVALSHA', sha, numberOfKeys, keysAndArgs),
    eval: (source, numberOfKeys, ...keysAndArgs) => withKeys('EVAL', source, numberOfKeys, keysAndArgs),
    set: (key, value, px, ttlMs, nx) => {
      const prefixed = keyPrefix + key;
      return send(['SET', prefixed, value, px, String(ttlMs), nx], prefixed);
    },
  };
}

/** Synced writes on duplicates of a plain client (createClient), opened when first needed. */
function syncSourceOf(client: NodeRedisStandalone): SyncSource {
  return {
    ended: () => !client.isOpen,
    onEnd: (listener) => void client.on('end', listener),
    open: () => {
      const connection = client.duplicate();
      connection.on('error', () => undefined);
      // Commands sent while it connects wait in its offline queue (node-redis's default).
      const opened = connection.connect().then(
        () => true,
        () => false,
      );
      return {
        client: connection,
        wait: (replicas, timeoutMs) => connection.sendCommand(['WAIT', String(replicas), String(timeoutMs)]).then(Number),
        mark: () => socketMark(connection),
        close: () => void opened.then(() => closeConnection(connection)),
      };
    },
  };
}

/**
 * Which socket a node-redis client is on: its socketEpoch, which counts
 * sockets that became ready. A reply can come before the first one is
 * marked ready (its handshake and the commands queued behind it are
 * answered in one read), at epoch 0 on the socket that becomes epoch 1:
 * the same socket, so 0 counts as 1. Read as another, a fresh client's first
 * synced write seemed to span a reconnect and failed (2 of 3 tries here).
 */
function socketMark(client: object): number | undefined {
  const epoch = (client as { socketEpoch?: number }).socketEpoch;
  return epoch === undefined ? undefined : Math.max(1, epoch);
}

function senderOf(client: NodeRedisClient): (args: string[], firstKey?: string) => Promise<unknown> {
  if (isCluster(client)) return (args, firstKey) => client.sendCommand(firstKey, false, args);
  if (isSentinel(client)) return (args) => client.sendCommand(false, args);
  return (args) => client.sendCommand(args);
}

/**
 * WAIT counts the writes of its own connection: a plain client has one; a
 * sentinel client only with one master connection in its pool (the
 * default), so that the WAIT follows the write on it.
 */
function waitsInOrder(client: NodeRedisClient, sentinel: boolean, options: SeenOptions): boolean {
  if (!sentinel) return typeof (client as { socketEpoch?: unknown }).socketEpoch === 'number';
  return (options.masterPoolSize ?? 1) === 1;
}

function prefixOf(client: NodeRedisClient, options: SeenOptions): string {
  const prefix = (client as { _keyPrefix?: string | Buffer })._keyPrefix ?? options.keyPrefix;
  return prefix === undefined ? '' : String(prefix);
}

/**
 * node-redis 5's Sentinel client says nothing when it becomes ready (no
 * 'ready' or 'connect'; v6 says 'ready'), nor when it is closed (no 'end'):
 * while a request waits for its first connection, its readiness is looked
 * at this often instead, until it is ready or no longer open.
 */
const SENTINEL_READY_POLL_MS = 10;

/**
 * node-redis connects only when told to (`await client.connect()`), and a
 * client that is not open stays so: quorumlock never opens a user's client
 * (it might have been closed on purpose), it fails the request instead.
 */
function connectingOf(client: NodeRedisClient): ConnectingClient {
  // A cluster says 'connect' once its slots are known, a client and a sentinel 'ready': either is heard, once ready.
  const wrapped = new Map<Listener, { readonly onReady: Listener; readonly poll: NodeJS.Timeout | undefined }>();
  // Called by the look below when a client that says nothing on closing is found closed.
  const ends = new Set<Listener>();
  const closedSilently = (): void => {
    for (const end of [...ends]) {
      connecting.off('end', end);
      end();
    }
  };
  const connecting: ConnectingClient = {
    get status() {
      return isReady(client) ? 'ready' : client.isOpen ? 'connecting' : 'end';
    },
    once: (event, listener) => {
      if (event !== 'ready') {
        client.once(String(event), listener as Listener);
        if (event === 'end') ends.add(listener as Listener);
        return connecting as never;
      }
      const onReady = (): void => {
        if (!isReady(client)) return;
        connecting.off('ready', listener);
        (listener as () => void)();
      };
      const look = (): void => {
        if (client.isOpen) return onReady();
        closedSilently();
        connecting.off('ready', listener);
      };
      const poll = isSentinel(client) ? setInterval(look, SENTINEL_READY_POLL_MS).unref() : undefined;
      wrapped.set(listener as Listener, { onReady, poll });
      client.on('ready', onReady);
      client.on('connect', onReady);
      return connecting as never;
    },
    off: (event, listener) => {
      const ready = event === 'ready' ? wrapped.get(listener as Listener) : undefined;
      if (ready === undefined) {
        client.off(String(event), listener as Listener);
        ends.delete(listener as Listener);
        return connecting as never;
      }
      wrapped.delete(listener as Listener);
      clearInterval(ready.poll);
      client.off('ready', ready.onReady);
      client.off('connect', ready.onReady);
      return connecting as never;
    },
    connect: () => client.connect().then(() => undefined),
  };
  return connecting;
}

function isReady(client: NodeRedisClient): boolean {
  if (client.isReady !== undefined) return client.isReady;
  // A v5 cluster is open from the start of connect(), and ready once it knows its masters.
  return client.isOpen && ((client as { masters?: readonly unknown[] }).masters?.length ?? 1) > 0;
}

function subscriberOf(client: NodeRedisClient): PubSubConnection {
  const own = client.duplicate !== undefined;
  const connection = client.duplicate?.() ?? client;
  // Errors surface as timeouts of the subscriptions; callers fall back on polling.
  if (own) connection.on('error', () => undefined);
  const opened = own
    ? connection.connect().then(
        () => true,
        () => false,
      )
    : Promise.resolve(true);
  const listeners: ((channel: string, message: string) => void)[] = [];
  const subscribed = new Set<string>();
  const hear: Message = (message, channel) => {
    for (const listener of listeners) listener(channel, message);
  };
  const whenOpen = <T>(action: () => Promise<T>): Promise<T> =>
    opened.then((open) => (open ? action() : Promise.reject(new Error('the subscriber connection failed'))));
  return {
    subscribe: (...channels) => {
      for (const channel of channels) subscribed.add(channel);
      return whenOpen(() => (connection as unknown as Subscribing).subscribe(channels, hear));
    },
    unsubscribe: (...channels) => {
      for (const channel of channels) subscribed.delete(channel);
      return whenOpen(() => (connection as unknown as Subscribing).unsubscribe(channels, hear));
    },
    onMessage: (listener) => void listeners.push(listener),
    // node-redis resubscribes by itself after a reconnect; the subscriber's own resubscribe is harmless.
    onReady: (listener) => void connection.on('ready', listener),
    disconnect: () => {
      // A shared connection is the user's: only our listener leaves it.
      if (!own) void (connection as unknown as Subscribing).unsubscribe([...subscribed], hear).catch(() => undefined);
      else void opened.then(() => closeConnection(connection));
    },
  };
}

function closeConnection(connection: NodeRedisClient): void {
  const closing = connection as unknown as { destroy?: () => unknown; disconnect?: () => unknown };
  // destroy() in v5 and later; disconnect() in v4. Either may reject on a connection already gone.
  const result = closing.destroy ? closing.destroy() : closing.disconnect?.();
  if (result instanceof Promise) result.catch(() => undefined);
}

function describeClient(client: NodeRedisClient, options: SeenOptions): string {
  if (isCluster(client)) {
    const seeds = (options.rootNodes ?? []).map((node) => node.url?.replace(/^rediss?:\/\//, '') ?? describeSeed(node.socket));
    return `cluster(${seeds.join(',')})`;
  }
  if (isSentinel(client)) return describeSentinel(client, options);
  if (options.url !== undefined) return new URL(options.url).host || options.url;
  const socket = options.socket ?? {};
  return socket.path ? `unix:${socket.path}` : `${socket.host ?? 'localhost'}:${socket.port ?? 6379}`;
}

/**
 * node-redis keeps a Sentinel client's options private (v5 and v6), so the
 * master's name and the sentinels are read where they show, never guessed:
 * the client identity (6.3, and 5.12) starts with the first sentinel's address.
 */
function describeSentinel(client: NodeRedisSentinel, options: SeenOptions): string {
  const sentinels = (options.sentinelRootNodes ?? []).map(describeSeed);
  if (sentinels.length === 0) {
    const identity = (client as { identity?: { id?: unknown } }).identity?.id;
    const first = typeof identity === 'string' ? /^(.+?:\d+)\//.exec(identity)?.[1] : undefined;
    if (first !== undefined) sentinels.push(first);
  }
  const master = options.name ?? 'Sentinel master';
  return sentinels.length === 0 ? `${master} via a node-redis Sentinel client` : `${master} via sentinels ${sentinels.join(',')}`;
}
