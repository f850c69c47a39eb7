/**
 * A Redis node in memory, for users' own tests (`quorumlock/testing`) and the
 * property tests. It runs quorumlock's own Lua scripts in an embedded Lua VM
 * (lua/LuaVm.ts) on an in-memory keyspace (keyspace/Keyspace.ts) with per-key
 * expiry on an injected clock, and pub/sub for wake-ups and handoffs. Lockers
 * reach it through the same adapter contract as a real client (ClientAdapter):
 * EVALSHA with the NOSCRIPT fallback, SET NX PX, SUBSCRIBE. Faults are planned
 * per request (RequestPipe.ts). Lockers take it where they take a client:
 * new RedisLock(new InMemoryNode()).
 *
 *   const node = new InMemoryNode('n1', clock);           // FakeClock, or fake-timer time
 *   node.get('a'); node.pttl('a');                         // what the keyspace holds now
 *   node.planner = () => ({ applyAfterMs: 5, fate: 'lose-reply' });
 *   node.restart({ downForMs: 2000 });                     // empty, refuses requests for 2 s
 *
 * Not simulated: replicas (syncReplicas is refused when a locker is built),
 * Redis Cluster, persistence, and commands no quorumlock script sends.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from '../clock/Clock.js';
import type { ClientAdapter } from '../node/ClientAdapter.js';
import type { ConnectingClient } from '../node/ConnectionGate.js';
import { IN_MEMORY_NODE, type InMemoryBackend } from '../node/NodeBackend.js';
import type { PubSubConnection } from '../node/PubSub.js';
import { RedisNodeBackend } from '../node/RedisNodeBackend.js';
import { RedisPubSub } from '../node/RedisPubSub.js';
import { holdProcessOpen } from './keepAlive.js';
import { Keyspace, type StringChange } from './keyspace/Keyspace.js';
import { LuaVm } from './lua/LuaVm.js';
import { errorReply, isError, isStatus, type Reply } from './lua/replies.js';
import { ANSWER_AT_ONCE, InMemoryNodeError, type PipeNode, RequestPipe, type RequestPlanner, type RequestRecord, type SimulatedRequest } from './RequestPipe.js';
import { scriptOp, valuesOf } from './scriptOps.js';

/** A reply as ioredis hands it on: a status as its string, integers as numbers, nil as null. */
export type CommandReply = string | number | null | CommandReply[];

interface Subscriber {
  readonly channels: Set<string>;
  readonly listeners: ((channel: string, message: string) => void)[];
}

let nextPortId = 0;

/** Scripts' SHA1s by source: hashing a script of some kB on every request cost more than running it. */
const shaBySource = new Map<string, string>();

function sha1Of(source: string): string {
  let sha = shaBySource.get(source);
  if (sha === undefined) {
    sha = createHash('sha1').update(source).digest('hex');
    shaBySource.set(source, sha);
  }
  return sha;
}

/** What the node is, apart from the backend the lockers talk to: its data, scripts, subscribers and connection. */
class Server implements PipeNode {
  readonly keyspace: Keyspace;
  readonly pipe: RequestPipe;
  readonly requests: RequestRecord[] = [];
  /** SHA1s of the scripts loaded (EVAL) since the last restart: EVALSHA of any other answers NOSCRIPT. */
  readonly scripts = new Set<string>();
  readonly subscribers = new Set<Subscriber>();
  epoch = 0;
  downUntil = Number.NEGATIVE_INFINITY;

  constructor(
    readonly name: string,
    readonly clock: Clock,
    public planner: RequestPlanner,
  ) {
    this.keyspace = new Keyspace(clock, (channel, message) => this.publish(channel, message));
    this.pipe = new RequestPipe(this);
  }

  get isDown(): boolean {
    return this.clock.now() < this.downUntil;
  }

  now(): number {
    return this.clock.now();
  }

  /** A command through the connection, its reply as ioredis gives it (an error reply rejects). */
  send(request: Omit<SimulatedRequest, 'seq'>, apply: () => Reply, needsVm: boolean): Promise<CommandReply> {
    const ready = needsVm && LuaVm.loaded === undefined ? LuaVm.load() : undefined;
    const tracked = (): { result: Reply; changed: readonly StringChange[] } => {
      const { result, changes } = this.keyspace.tracking(apply);
      return { result, changed: changes };
    };
    return this.pipe.send(request, tracked, ready).then(toClientReply);
  }

  command(args: readonly (string | number)[]): Promise<CommandReply> {
    const strings = args.map(String);
    const name = (strings[0] ?? '').toUpperCase();
    const isAcquire = name === 'SET' && strings.some((arg) => arg.toUpperCase() === 'NX');
    const pxAt = strings.findIndex((arg) => arg.toUpperCase() === 'PX');
    const request = {
      op: isAcquire ? ('acquire' as const) : ('command' as const),
      command: name,
      keys: strings.length > 1 ? [strings[1] as string] : [],
      value: isAcquire ? (strings[2] ?? '') : '',
      values: isAcquire ? [strings[2] ?? ''] : [],
      ...(isAcquire && pxAt > 0 ? { ttlMs: Number(strings[pxAt + 1]) } : {}),
    };
    return this.send(request, () => this.keyspace.command(strings), false);
  }

  script(command: 'EVALSHA' | 'EVAL', shaOrSource: string, keyCount: number, keysAndArgs: readonly (string | number)[]): Promise<CommandReply> {
    const all = keysAndArgs.map(String);
    const keys = all.slice(0, keyCount);
    const args = all.slice(keyCount);
    const source = command === 'EVAL' ? shaOrSource : undefined;
    const sha = source === undefined ? shaOrSource.toLowerCase() : sha1Of(source);
    const { op, valueFirst } = scriptOp(sha);
    const ttl = op === 'acquire' || op === 'extend' ? Number(args[1]) : undefined;
    const request = { op, command, keys, value: valueFirst ? (args[0] ?? '') : '', values: valuesOf(sha, args), ...(ttl !== undefined && Number.isFinite(ttl) ? { ttlMs: ttl } : {}) };
    return this.send(request, () => this.runScript(sha, source, keys, args), true);
  }

  runScript(sha: string, source: string | undefined, keys: readonly string[], args: readonly string[]): Reply {
    const vm = LuaVm.loaded as LuaVm;
    if (source === undefined && !this.scripts.has(sha)) return errorReply('NOSCRIPT No matching script. Please use EVAL.');
    // A SHA1 this node knows was compiled when it was sent whole.
    const compiled = vm.compile(sha, source ?? '');
    if ('error' in compiled) return errorReply(compiled.error);
    this.scripts.add(sha);
    return vm.run(compiled, keys, args, (commandArgs) => this.keyspace.command(commandArgs));
  }

  publish(channel: string, message: string): number {
    let received = 0;
    for (const subscriber of this.subscribers) {
      if (!subscriber.channels.has(channel)) continue;
      received++;
      for (const listener of subscriber.listeners) queueMicrotask(() => listener(channel, message));
    }
    return received;
  }

  connectSubscriber(): PubSubConnection {
    const subscriber: Subscriber = { channels: new Set(), listeners: [] };
    this.subscribers.add(subscriber);
    const letGo = holdProcessOpen();
    return {
      subscribe: (...channels) => {
        for (const channel of channels) subscriber.channels.add(channel);
        return Promise.resolve(subscriber.channels.size);
      },
      unsubscribe: (...channels) => {
        for (const channel of channels) subscriber.channels.delete(channel);
        return Promise.resolve(subscriber.channels.size);
      },
      onMessage: (listener) => subscriber.listeners.push(listener),
      onReady: () => undefined,
      disconnect: () => {
        this.subscribers.delete(subscriber);
        letGo();
      },
    };
  }

  /** The adapter lockers reach the node through, as they reach a real client through its own. */
  adapter(name: string): ClientAdapter {
    const commands = {
      evalsha: (sha: string, keyCount: number, ...keysAndArgs: (string | number)[]) => this.script('EVALSHA', sha, keyCount, keysAndArgs),
      eval: (source: string, keyCount: number, ...keysAndArgs: (string | number)[]) => this.script('EVAL', source, keyCount, keysAndArgs),
      set: (key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX') => this.command(['SET', key, value, px, ttlMs, nx]),
    };
    const connecting = vmConnection();
    return {
      name,
      isCluster: false,
      keyPrefix: '',
      connecting,
      commands,
      beforeWrite: undefined,
      // No replicas are simulated: syncReplicas is refused when a locker is built.
      wait: undefined,
      syncSource: undefined,
      connectionMark: () => this.epoch,
      subscriber: () => this.connectSubscriber(),
    };
  }
}

/**
 * The node "connects" while the Lua VM loads (its WebAssembly compiles, the
 * first time in a process): the lockers' connection gate holds requests
 * meanwhile, so loading does not count against the node timeout.
 */
function vmConnection(): ConnectingClient {
  if (LuaVm.loaded !== undefined) return Object.assign(new EventEmitter(), { status: 'ready', connect: () => Promise.resolve() });
  const connection = Object.assign(new EventEmitter(), { status: 'connecting', connect: () => Promise.resolve() });
  LuaVm.load().then(
    () => {
      connection.status = 'ready';
      connection.emit('ready');
    },
    (error: unknown) => {
      connection.status = 'end';
      connection.emit('error', error instanceof Error ? error : new Error(String(error)));
    },
  );
  return connection;
}

function toClientReply(reply: Reply): CommandReply {
  if (Array.isArray(reply)) return reply.map(toClientReply);
  if (typeof reply === 'object' && reply !== null) {
    if (isError(reply)) throw new Error(reply.error);
    if (isStatus(reply)) return reply.status;
  }
  return reply as string | number | null;
}

/**
 * A Redis node in memory that runs quorumlock's own Lua scripts, for tests
 * with no Redis server: lockers take it where they take a client
 * (`new RedisLock(new InMemoryNode())`). See the testing guide for what is
 * simulated and what is not.
 */
export class InMemoryNode extends RedisNodeBackend implements InMemoryBackend {
  /** @internal Lockers take this node as it is, where they take a client. */
  readonly [IN_MEMORY_NODE] = true as const;
  /** The node's own clock: expiry is counted on it (give it a skewed one to model a fast node). */
  readonly clock: Clock;
  /** Subscriptions of this node alone: two nodes of one name are still two nodes. */
  /** @internal */
  override readonly pubSub: RedisPubSub;
  readonly #server: Server;

  /** `clock`: monotonic ms that keys expire on (default performance.now()); `planner`: each request's delays and fate (default: at once). */
  constructor(name = 'in-memory', clock: Clock = performance, planner: RequestPlanner = () => ANSWER_AT_ONCE) {
    const server = new Server(name, clock, planner);
    const adapter = server.adapter(name);
    super(adapter, name);
    this.#server = server;
    this.clock = clock;
    this.pubSub = new RedisPubSub(adapter, `${name}#${++nextPortId}`);
  }

  /** Decides each request's delays and fate. */
  get planner(): RequestPlanner {
    return this.#server.planner;
  }

  /** Plans each request's fate from now on: a delay, a lost reply, a failure before or after the write. */
  set planner(planner: RequestPlanner) {
    this.#server.planner = planner;
  }

  /** Every request sent to this node, in order. */
  get requests(): RequestRecord[] {
    return this.#server.requests;
  }

  /**
   * The server time (TIME) that the scripts count leases and stamps on: the
   * node's clock unless told otherwise.
   */
  get serverTime(): Clock {
    return this.#server.keyspace.serverTime;
  }

  /** The clock the node's scripts read as `TIME` (the node's own clock by default). */
  set serverTime(clock: Clock) {
    this.#server.keyspace.serverTime = clock;
  }

  /**
   * Sends one plain command on the node's connection (through the planner),
   * as a client's `call` would: `await node.command('GET', 'a')`. An error
   * reply rejects.
   */
  command(...args: (string | number)[]): Promise<CommandReply> {
    return this.#server.command(args);
  }

  /** Runs a script as EVAL on the node's connection: it is loaded, so EVALSHA of it works from then on (until a restart). */
  eval(source: string, keyCount: number, ...keysAndArgs: (string | number)[]): Promise<CommandReply> {
    return this.#server.script('EVAL', source, keyCount, keysAndArgs);
  }

  /** Runs a loaded script by its SHA1 on the node's connection; rejects with NOSCRIPT when the node does not know it. */
  evalsha(sha: string, keyCount: number, ...keysAndArgs: (string | number)[]): Promise<CommandReply> {
    return this.#server.script('EVALSHA', sha, keyCount, keysAndArgs);
  }

  /** Applies one plain command at once, past the connection and the planner (for setting a test up); its reply as the server sends it. */
  commandNow(...args: (string | number)[]): Reply {
    return this.#server.keyspace.command(args.map(String));
  }

  /**
   * Runs a script at once, past the connection and the planner (as EVAL,
   * so the node knows it from then on); its reply as the server sends it.
   * For searches that play thousands of requests in order, synchronously.
   * The Lua VM must be loaded (await InMemoryNode.ready()).
   */
  evalNow(source: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const sha = this.loadScript(source);
    return this.#server.keyspace.tracking(() => this.#server.runScript(sha, source, keys, args.map(String))).result;
  }

  /**
   * SCRIPT LOAD, applied at once past the connection: the node knows the
   * script from then on (until a restart), as a server that has run it
   * before; returns its SHA1. The Lua VM must be loaded (await
   * InMemoryNode.ready()).
   */
  loadScript(source: string): string {
    const sha = sha1Of(source);
    const vm = LuaVm.loaded;
    if (vm === undefined) throw new InMemoryNodeError(this.name, 'the Lua VM is not loaded yet: await InMemoryNode.ready() first');
    const compiled = vm.compile(sha, source);
    if ('error' in compiled) throw new InMemoryNodeError(this.name, compiled.error);
    this.#server.scripts.add(sha);
    return sha;
  }

  /** Resolves once the process's Lua VM is loaded (nodes wait for it by themselves; tests on fake timers load it first). */
  static ready(): Promise<void> {
    return LuaVm.load().then(() => undefined);
  }

  /** The value at `key`, or undefined when missing or expired (as GET sees it). */
  get(key: string): string | undefined {
    return this.#server.keyspace.get(key);
  }

  /** As Redis PTTL, exactly: milliseconds left (fractions of the clock kept), -1 without a TTL, -2 when missing. */
  pttl(key: string): number {
    return this.#server.keyspace.pttl(key);
  }

  /** The sorted set at `key` in ZRANGE's order, with scores; empty when missing. */
  sortedSet(key: string): [member: string, score: number][] {
    return this.#server.keyspace.sortedSet(key);
  }

  /** The members of the sorted set at `key` (a wait line: first first). */
  lineOrder(key: string): string[] {
    return this.sortedSet(key).map(([member]) => member);
  }

  /** Every live key's name. */
  keyNames(): string[] {
    return this.#server.keyspace.keys();
  }

  /** Live string keys with their values. */
  snapshot(): Map<string, string> {
    const live = new Map<string, string>();
    for (const key of this.keyNames()) {
      const value = this.get(key);
      if (value !== undefined) live.set(key, value);
    }
    return live;
  }

  /** Node-clock instant from which the node takes requests again after a delayed restart. */
  get availableAt(): number {
    return this.#server.downUntil;
  }

  /** True while the node refuses requests after a delayed restart. */
  get isDown(): boolean {
    return this.#server.isDown;
  }

  /**
   * The process restarts with an empty dataset (no persistence) and an empty
   * script cache (EVALSHA answers NOSCRIPT until a script is sent whole):
   * requests not yet applied are dropped and replies not yet delivered fail
   * (the connection broke). With `downForMs` the node refuses requests that
   * long, as the Redlock spec's delayed restart asks for.
   */
  restart(options: { downForMs?: number } = {}): void {
    const server = this.#server;
    server.keyspace.clear();
    server.scripts.clear();
    server.epoch++;
    server.downUntil = this.clock.now() + (options.downForMs ?? 0);
  }
}

export { InMemoryNodeError };
