import {
  type Announce,
  acquire,
  acquireFenced,
  acquireInLine,
  extend,
  extendMany,
  fence,
  inspectKey,
  keepalive,
  type KeyState,
  leave,
  type LineEntry,
  type LuaScript,
  type LinePlace,
  type LineReply,
  type Rejoin,
  release,
  type RenewalEntry,
  renewEach,
  type ScriptRenewal,
  type ScriptClient,
  type SetClient,
  onScriptResend,
  scriptResends,
  type UndoneInLine,
  undoInLine,
  verify,
} from '../scripts/index.js';
import { adapterFor, type RedisClient } from './assertClient.js';
import type { ClientAdapter } from './ClientAdapter.js';
import { RedisPubSub } from './RedisPubSub.js';
import { ConnectionGate } from './ConnectionGate.js';
import { assertFencingKeysShareSlot, assertSameHashSlot, bySlot } from './hashSlot.js';
import type { NodeBackend, SyncedReply } from './NodeBackend.js';
import { SyncConnections } from './SyncConnections.js';
import { NodeConnectionError } from '../shared/errors.js';

/** Runs the lock scripts on one client, through its adapter (ClientAdapter.ts). */
export class RedisNodeBackend implements NodeBackend {
  /** The node's name in outcomes and errors. */
  readonly name: string;
  /** @internal */
  readonly connection: ConnectionGate;
  /**
   * Only a cluster has keys to check; on a standalone node it is undefined,
   * so lockers make no call at all for it on every acquire.
   */
  readonly checkKeys: ((keys: readonly string[], argument: string, fencing: boolean) => void) | undefined;
  /**
   * Undefined on a cluster: WAIT names no key, so a Cluster client would
   * send it to any master, not to the one that took the write.
   *
   * @internal
   */
  readonly synced: (<T>(write: (on: NodeBackend) => Promise<T>, replicas: number, timeoutMs: number) => Promise<SyncedReply<T>>) | undefined;
  private readonly scripts: ScriptClient & SetClient;
  private readonly isCluster: boolean;
  /** @internal */
  readonly pubSub: RedisPubSub | undefined;
  private readonly adapter: ClientAdapter;

  /** How many scripts this backend's client resent after NOSCRIPT (see scriptResends). */
  get scriptResends(): number {
    return scriptResends(this.scripts);
  }

  /** @internal See NodeBackend.onScriptResend. */
  onScriptResend(listener: () => void): () => void {
    return onScriptResend(this.scripts, listener);
  }

  /** `client`: a client users pass (see assertClient.ts), or its adapter. */
  constructor(client: RedisClient | ClientAdapter, name?: string) {
    const adapter = isAdapter(client) ? client : adapterFor(client, 'client');
    this.adapter = adapter;
    this.scripts = adapter.commands;
    this.isCluster = adapter.isCluster;
    this.checkKeys = this.isCluster ? checkClusterKeys : undefined;
    const wait = adapter.wait;
    const source = adapter.syncSource;
    if (source) {
      // Opened at the first synced write: most lockers never sync.
      let connections: SyncConnections | undefined;
      this.synced = (write, replicas, timeoutMs) => {
        connections ??= new SyncConnections(source, (connection) => new RedisNodeBackend(connection as RedisClient, this.name));
        return connections.synced(write, replicas, timeoutMs);
      };
    } else {
      this.synced = wait === undefined ? undefined : (write, replicas, timeoutMs) => syncedOn(adapter, wait, () => write(this), replicas, timeoutMs);
    }
    this.name = name ?? adapter.name;
    this.pubSub = adapter.subscriber ? new RedisPubSub(adapter, this.name) : undefined;
    this.connection = new ConnectionGate(adapter.connecting, this.name);
  }

  acquire(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    return this.#beforeWrite() ?? acquire(this.scripts, keys, value, ttlMs);
  }

  acquireFenced(keys: readonly string[], value: string, ttlMs: number): Promise<bigint[] | null> {
    return this.#beforeWrite() ?? acquireFenced(this.scripts, keys, value, ttlMs);
  }

  /** @internal */
  acquireInLine(keys: readonly string[], value: string, ttlMs: number, fencing: boolean, place: LinePlace): Promise<LineReply> {
    return this.#beforeWrite() ?? acquireInLine(this.scripts, keys, value, ttlMs, fencing, place);
  }

  /** @internal */
  keepalive(entries: readonly LineEntry[], leaseMs: number): Promise<number> {
    // On a cluster the entries' keys lie in different slots: one request each.
    const refused = this.#refusedWhileClosing();
    if (refused) return refused;
    if (!this.isCluster) return keepalive(this.scripts, entries, leaseMs);
    return Promise.all(entries.map((entry) => keepalive(this.scripts, [entry], leaseMs))).then((kept) => kept.reduce((a, b) => a + b, 0));
  }

  leave(keys: readonly string[], value: string, acquired: boolean): Promise<number> {
    return this.#refusedWhileClosing() ?? leave(this.scripts, keys, value, acquired);
  }

  fence(keys: readonly string[], value: string, tokens: readonly bigint[]): Promise<boolean> {
    return this.#beforeWrite() ?? fence(this.scripts, keys, value, tokens);
  }

  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    return this.#beforeWrite() ?? extend(this.scripts, keys, value, ttlMs);
  }

  /** One script call per chunk of locks; on a cluster, per hash slot too (a script's keys must share one). @internal */
  extendMany(entries: readonly RenewalEntry[]): Promise<boolean[]> {
    return this.#beforeWrite() ?? (this.isCluster ? this.perSlot(entries, (group) => extendMany(this.scripts, group)) : extendMany(this.scripts, entries));
  }

  /** As extendMany, for another primitive's holders (NodeBackend.renewEach). @internal */
  renewEach(script: LuaScript, entries: readonly ScriptRenewal[]): Promise<boolean[]> {
    return (
      this.#beforeWrite() ?? (this.isCluster ? this.perSlot(entries, (group) => renewEach(this.scripts, script, group)) : renewEach(this.scripts, script, entries))
    );
  }

  verify(keys: readonly string[], value: string): Promise<number> {
    return this.#beforeWrite() ?? verify(this.scripts, keys, value);
  }

  inspect(resources: readonly string[]): Promise<readonly KeyState[]> {
    // One request per resource: on a cluster the resources may lie in different slots.
    return Promise.all(resources.map((resource) => inspectKey(this.scripts, resource)));
  }

  /** @internal */
  release(keys: readonly string[], value: string, announce: Announce = 'marked'): Promise<number> {
    return this.#beforeWrite() ?? release(this.scripts, keys, value, announce);
  }

  /** @internal */
  undoInLine(keys: readonly string[], value: string, rejoin: Rejoin): Promise<UndoneInLine> {
    return this.#beforeWrite() ?? undoInLine(this.scripts, keys, value, rejoin);
  }

  /** @internal */
  runScript<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], read: (reply: unknown) => T): Promise<T> {
    return this.#beforeWrite() ?? script.run(this.scripts, keys, args, read);
  }

  /** `renew` once per hash slot of the entries' keys (a holder's keys share one); the answers in the entries' order. */
  private perSlot<E extends { readonly keys: readonly string[] }>(entries: readonly E[], renew: (group: E[]) => Promise<boolean[]>): Promise<boolean[]> {
    const groups = bySlot(entries, (entry) => this.adapter.keyPrefix + (entry.keys[0] as string));
    const results = new Array<boolean>(entries.length);
    const calls = [...groups.values()].map((indexes) =>
      renew(indexes.map((index) => entries[index] as E)).then((held) => indexes.forEach((index, i) => (results[index] = held[i] === true))),
    );
    return Promise.all(calls).then(() => results);
  }

  /** Before a lock command is written: refused while the client is closing, else the adapter's beforeWrite (write coalescing). */
  #beforeWrite(): Promise<never> | undefined {
    const refused = this.#refusedWhileClosing();
    if (!refused) this.adapter.beforeWrite?.();
    return refused;
  }

  /**
   * A rejection, sent nowhere, once the user has closed or is closing the
   * client (ClientAdapter.closing): background writes (a release that follows
   * a late write, a leave) would go out behind the user's QUIT.
   */
  #refusedWhileClosing(): Promise<never> | undefined {
    return this.adapter.closing?.() ? Promise.reject(new NodeConnectionError(this.name, new Error('the client is closing'))) : undefined;
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
function syncedOn<T>(
  adapter: ClientAdapter,
  wait: NonNullable<ClientAdapter['wait']>,
  write: () => Promise<T>,
  replicas: number,
  timeoutMs: number,
): Promise<SyncedReply<T>> {
  const connection = adapter.connectionMark();
  const resendsBefore = scriptResends(adapter.commands);
  const written = write();
  const acknowledged = wait(replicas, timeoutMs);
  return Promise.all([written, acknowledged])
    .then(([reply, count]) =>
      scriptResends(adapter.commands) === resendsBefore ? { reply, acknowledged: count } : wait(replicas, timeoutMs).then((again) => ({ reply, acknowledged: again })),
    )
    .then((synced): SyncedReply<T> => (adapter.connectionMark() === connection ? synced : { ...synced, connectionChanged: true }));
}

function isAdapter(client: RedisClient | ClientAdapter): client is ClientAdapter {
  return (client as Partial<ClientAdapter>).commands !== undefined && (client as Partial<ClientAdapter>).connecting !== undefined;
}

/** On a cluster, a lock's keys (and with fencing their counters) must share one hash slot. */
function checkClusterKeys(keys: readonly string[], argument: string, fencing: boolean): void {
  assertSameHashSlot(keys, argument);
  if (fencing) assertFencingKeysShareSlot(keys, argument);
}
