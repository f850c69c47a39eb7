/**
 * A Redis node in memory, for users' own tests (`quorumlock/testing`) and
 * the property tests: it implements NodeBackend with the semantics of
 * src/scripts/{acquire,extend,release,keepalive,leave,inspect}.lua, wait
 * lines and handoffs included (test/property/simulatedNode.test.ts checks it
 * against a real redis-server), on an injected clock, with faults planned
 * per request. Lockers take it where they take a client:
 * new RedisLock(new InMemoryNode()).
 *
 *   const node = new InMemoryNode('n1', clock);           // FakeClock, or fake-timer time
 *   await node.acquire(['a'], 'v1', 1000);                 // true
 *   node.get('a'); node.pttl('a');                         // 'v1', 1000
 *   node.planner = () => ({ applyAfterMs: 5, fate: 'lose-reply' });
 *   node.restart({ downForMs: 2000 });                     // empty, refuses requests for 2 s
 *
 * One connection per node, as with ioredis: requests are applied in the order
 * they were sent and replies come back in that order, whatever the delays.
 * Delays run on setTimeout, so tests that use them drive time with fake timers
 * and give the node a clock that reads the same fake time.
 */
import type { Clock } from '../clock/Clock.js';
import { IN_MEMORY_NODE, type NodeBackend } from '../node/NodeBackend.js';
import type { PubSubConnection, PubSubPort } from '../node/PubSub.js';
import type { KeyState, LineEntry, LinePlace, LineReply } from '../scripts/index.js';
import { lineKeysFor } from '../scripts/lineKeys.js';
import { RESERVATION_MS } from '../scripts/line.js';
import { type Announce, HANDOFF_CHANNEL_PREFIX, RELEASE_CHANNEL_PREFIX, type Rejoin, type UndoneInLine } from '../scripts/release.js';
import { holderValue, isMarked, WAITER_MARK } from '../scripts/waiterMark.js';

/** The kind of a request to the node, as a planner sees it (`keepalive` and `leave` come from the wait lines). */
export type SimulatedOperation = 'acquire' | 'extend' | 'release' | 'keepalive' | 'leave';

/**
 * What happens to one request:
 * - 'reply': applied, then answered;
 * - 'lose-reply': applied, the reply never comes (a dropped reply, a partition after the request);
 * - 'fail-before': rejected without being applied (connection refused or reset before sending);
 * - 'fail-after': applied, then rejected (connection reset after the request was applied).
 */
export type RequestFate = 'reply' | 'lose-reply' | 'fail-before' | 'fail-after';

/** A planner's say over one request: its delays and its fate. Fields left out take the default. */
export interface RequestPlan {
  /**
   * Milliseconds from sending until the node applies it (later if an earlier request is still queued).
   * @default 0
   */
  readonly applyAfterMs?: number;
  /**
   * Milliseconds from applying until the reply (or the failure) reaches the caller.
   * @default 0
   */
  readonly replyAfterMs?: number;
  /**
   * What becomes of the request: see {@link RequestFate}.
   * @default 'reply'
   */
  readonly fate?: RequestFate;
}

/** One request as the node's planner is shown it. */
export interface SimulatedRequest {
  /** 1, 2, 3, ... in the order requests were sent to this node. */
  readonly seq: number;
  /** What the request does. */
  readonly op: SimulatedOperation;
  /** The keys it touches. */
  readonly keys: readonly string[];
  /** The lock value it carries. */
  readonly value: string;
  /** The TTL it sets, in milliseconds (acquire and extend). */
  readonly ttlMs?: number;
}

/** Decides each request's delays and fate; the default applies and answers at once. */
export type RequestPlanner = (request: SimulatedRequest) => RequestPlan;

/** What became of a request, filled in as it progresses. */
export interface RequestRecord extends SimulatedRequest {
  /** The plan it ran with, defaults filled in. */
  readonly plan: Required<RequestPlan>;
  /** Node-clock instant it was applied, if it was. */
  appliedAt?: number;
  /** The script's result, if applied: boolean for acquire/extend, the count for release. */
  result?: boolean | number | LineReply | UndoneInLine;
  /** Keys the request wrote or deleted, with the value they held before. */
  changed?: readonly {
    /** The key's name. */
    key: string;
    /** Its value before the request; undefined when it was absent. */
    before: string | undefined;
  }[];
  /** Why it was not applied or not answered. */
  failure?: string;
}

interface Entry {
  readonly value: string;
  /** Node-clock instant at which the key is gone. */
  readonly expiresAt: number;
}

/** One resource's wait line: its line and lease ZSETs (expiring together) and its ticket counter. */
interface WaitLine {
  /** value -> ticket. */
  readonly order: Map<string, number>;
  /** value -> server-time ms until which the place is held. */
  readonly lease: Map<string, number>;
  expiresAt: number;
}

let nextPortId = 0;

/**
 * How the node rejects a request that was not answered: planned to fail
 * (`fail-before`, `fail-after`), cut off by restart(), sent while the node is
 * down, or for something it does not simulate. Lockers count it as that
 * node's `error` outcome, as they would a client's error.
 */
export class InMemoryNodeError extends Error {
  /** @internal The node makes its errors. */
  constructor(node: string, problem: string) {
    super(`${node}: ${problem}`);
    this.name = 'InMemoryNodeError';
  }
}

const ANSWER_AT_ONCE: Required<RequestPlan> = Object.freeze({ applyAfterMs: 0, replyAfterMs: 0, fate: 'reply' });

/**
 * A Redis node in memory, for your own tests: pass it where a client goes
 * (`new RedisLock(node)`, `new Redlock([n1, n2, n3])`). Keys expire on the
 * node's clock, and a planner gives each request delays and a fate (a lost
 * reply, a failure before or after the write). Requests are applied and
 * answered in the order sent, as on one connection. Delays run on
 * setTimeout: drive them with fake timers and a clock that reads the same time.
 */
export class InMemoryNode implements NodeBackend {
  /** @internal Lockers take this node as it is, where they take a client. */
  readonly [IN_MEMORY_NODE] = true;
  /** The node's label in outcomes and errors. */
  readonly name: string;
  /** The node's own clock: expiry is counted on it (give it a skewed one to model a fast node). */
  readonly clock: Clock;
  /** Decides each request's delays and fate; may be replaced at any time. */
  planner: RequestPlanner;
  /** Every request sent to this node, in order. */
  readonly requests: RequestRecord[] = [];

  private readonly store = new Map<string, Entry>();
  private readonly lines = new Map<string, WaitLine>();
  private readonly counters = new Map<string, { value: number; expiresAt: number }>();
  /** Subscribed connections (release.lua and hand-offs PUBLISH on them). */
  private readonly subscribers = new Set<{ channels: Set<string>; listeners: ((channel: string, message: string) => void)[] }>();
  /**
   * The server time (TIME) that leases are counted on: the node's clock
   * unless told otherwise (a comparison with a real server whose keys are
   * aged by jumps, while its TIME runs on, freezes it).
   */
  serverTime: Clock;
  private seq = 0;
  private lastServerUs = 0;
  /** Bumped by restart(): requests from an older epoch are never applied or answered. */
  private epoch = 0;
  private downUntil = Number.NEGATIVE_INFINITY;
  /** Resolves when the previously sent request has been applied (or dropped). */
  private applyTail: Promise<void> = Promise.resolve();
  /** Resolves when the previous reply has been delivered (or dropped). */
  private replyTail: Promise<void> = Promise.resolve();

  /**
   * @param name - The node's label.
   * @param clock - Monotonic milliseconds that keys expire on (default: `performance`).
   * @param planner - Each request's delays and fate (default: applied and answered at once).
   */
  constructor(name = 'in-memory', clock: Clock = performance, planner: RequestPlanner = () => ANSWER_AT_ONCE) {
    this.name = name;
    this.clock = clock;
    this.planner = planner;
    this.serverTime = clock;
    const id = `${name}#${++nextPortId}`;
    this.pubSub = { id, channelFor: (prefix, key) => `${prefix}${key}`, connect: () => this.connectSubscriber() };
  }

  /** @internal The node contract that lockers call. */
  readonly pubSub: PubSubPort;

  // --- NodeBackend -----------------------------------------------------------

  /** @internal The node contract that lockers call. */
  acquire(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    return this.send({ op: 'acquire', keys, value, ttlMs }, () => this.applyAcquire(keys, value, ttlMs));
  }

  /** @internal The node contract that lockers call. */
  acquireInLine(keys: readonly string[], value: string, ttlMs: number, fencing: boolean, place: LinePlace): Promise<LineReply> {
    if (fencing) return Promise.reject(new InMemoryNodeError(this.name, 'fencing is not simulated'));
    return this.send({ op: 'acquire', keys, value, ttlMs }, () => this.applyAcquireInLine(keys, value, ttlMs, place));
  }

  /** @internal The node contract that lockers call. */
  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    return this.send({ op: 'extend', keys, value, ttlMs }, () => this.applyExtend(keys, value, ttlMs));
  }

  /** @internal The node contract that lockers call. */
  release(keys: readonly string[], value: string, announce: Announce = 'marked'): Promise<number> {
    return this.send({ op: 'release', keys, value }, () => this.applyRelease(keys, value, announce));
  }

  /** @internal The node contract that lockers call. */
  undoInLine(keys: readonly string[], value: string, rejoin: Rejoin): Promise<UndoneInLine> {
    return this.send({ op: 'release', keys, value }, () => this.applyUndoInLine(keys, value, rejoin));
  }

  /** @internal The node contract that lockers call. */
  keepalive(entries: readonly LineEntry[], leaseMs: number): Promise<number> {
    const keys = entries.flatMap((entry) => entry.keys);
    return this.send({ op: 'keepalive', keys, value: '' }, () => this.applyKeepalive(entries, leaseMs));
  }

  /** @internal The node contract that lockers call. */
  leave(keys: readonly string[], value: string, acquired: boolean): Promise<number> {
    return this.send({ op: 'leave', keys, value }, () => this.applyLeave(keys, value, acquired));
  }

  /** @internal The node contract that lockers call. */
  inspect(resources: readonly string[]): Promise<readonly KeyState[]> {
    return Promise.resolve(resources.map((resource) => this.inspectKey(resource)));
  }

  /** inspect.lua: the key's holder and PTTL, and the waiters whose lease has not passed; changes nothing. */
  private inspectKey(resource: string): KeyState {
    const stored = this.get(resource);
    const nowMs = this.serverTime.now();
    let waiters = 0;
    for (const leaseUntil of this.line(resource)?.lease.values() ?? []) if (leaseUntil > nowMs) waiters++;
    return {
      resource,
      value: stored === undefined ? null : holderValue(stored),
      waiterMarked: stored !== undefined && isMarked(stored),
      pttlMs: this.pttl(resource),
      waiters,
    };
  }

  private connectSubscriber(): PubSubConnection {
    const subscriber = { channels: new Set<string>(), listeners: [] as ((channel: string, message: string) => void)[] };
    this.subscribers.add(subscriber);
    return {
      subscribe: (...channels) => {
        for (const channel of channels) subscriber.channels.add(channel);
        return Promise.resolve(channels.length);
      },
      unsubscribe: (...channels) => {
        for (const channel of channels) subscriber.channels.delete(channel);
        return Promise.resolve(0);
      },
      onMessage: (listener) => subscriber.listeners.push(listener),
      onReady: () => undefined,
      disconnect: () => this.subscribers.delete(subscriber),
    };
  }

  /**
   * TIME in µs, as the scripts read it: on the server clock, and strictly
   * increasing from script to script (what a handoff's announcement is
   * compared with, see handoffGrant.ts).
   */
  private serverUs(nowMs: number): number {
    this.lastServerUs = Math.max(this.lastServerUs + 1, Math.floor(nowMs * 1000));
    return this.lastServerUs;
  }

  /** PUBLISH: messages travel on the subscriber's own connection, so they arrive after the script ran. */
  private publish(key: string, message: string, channel = `${RELEASE_CHANNEL_PREFIX}${key}`): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.channels.has(channel)) continue;
      for (const listener of subscriber.listeners) queueMicrotask(() => listener(channel, message));
    }
  }

  // --- the three scripts, applied at once --------------------------------------

  /** @internal
   * acquire.lua without line mode: all keys or none; true when every key now
   * holds `value` (marked or not: a mark is kept). One key is a SET NX PX,
   * which refuses a key holding our own value too.
   */
  applyAcquire(keys: readonly string[], value: string, ttlMs: number): { result: boolean; changed: Changed } {
    assertTtl(ttlMs);
    if (keys.length === 1 && this.get(keys[0] as string) !== undefined) return { result: false, changed: [] };
    for (const key of keys) {
      const current = this.get(key);
      if (current !== undefined && !holds(current, value)) return { result: false, changed: [] };
    }
    return { result: true, changed: this.take(keys, value, ttlMs) };
  }

  /** @internal
   * acquire.lua in line mode: granted when every key is free or holds
   * `value` and `value` is first among the live waiters of every line (or the
   * lines are empty); otherwise it joins (or keeps its place, raised to the
   * caller's ticket) with one ticket for all its lines, refreshes its lease
   * and marks the first key held by another value.
   */
  applyAcquireInLine(keys: readonly string[], value: string, ttlMs: number, place: LinePlace): { result: LineReply; changed: Changed } {
    assertTtl(ttlMs);
    const nowMs = this.serverTime.now();
    const heldBy = keys.find((key) => {
      const current = this.get(key);
      return current !== undefined && !holds(current, value);
    });
    let first = heldBy === undefined;
    for (const key of keys) {
      const head = this.firstLive(key, nowMs);
      if (head !== undefined && head !== value) first = false;
    }
    if (first) {
      for (const key of keys) this.leaveLine(key, value);
      return { result: { granted: true }, changed: this.take(keys, value, ttlMs) };
    }
    const changed: { key: string; before: string | undefined }[] = [];
    if (heldBy !== undefined) {
      const current = this.get(heldBy) as string;
      if (!isMarked(current)) {
        const entry = this.store.get(heldBy) as Entry;
        this.store.set(heldBy, { value: current + WAITER_MARK, expiresAt: entry.expiresAt });
        changed.push({ key: heldBy, before: current });
      }
    }
    let ticket = place.ticket;
    let everywhere = true;
    for (const key of keys) {
      const score = this.line(key)?.order.get(value);
      if (score === undefined) everywhere = false;
      else if (score > ticket) ticket = score;
    }
    if (!everywhere && place.ticket === 0) {
      for (const key of keys) {
        const next = Math.max((this.counter(key) ?? 0) + 1, Math.floor(nowMs * 1000));
        this.setCounter(key, next, place.leaseMs);
        if (next > ticket) ticket = next;
      }
    }
    for (const key of keys) {
      if ((this.counter(key) ?? 0) < ticket) this.setCounter(key, ticket, place.leaseMs);
      const line = this.openLine(key);
      line.order.set(value, ticket);
      line.lease.set(value, nowMs + place.leaseMs);
      line.expiresAt = this.clock.now() + place.leaseMs;
      this.setCounter(key, this.counter(key) as number, place.leaseMs);
    }
    return { result: { granted: false, ticket, serverUs: this.serverUs(nowMs) }, changed };
  }

  /** @internal extend.lua: new TTL on every key, only if every key holds `value` (marked or not). */
  applyExtend(keys: readonly string[], value: string, ttlMs: number): { result: boolean; changed: Changed } {
    assertTtl(ttlMs);
    for (const key of keys) if (!holds(this.get(key), value)) return { result: false, changed: [] };
    const expiresAt = this.clock.now() + ttlMs;
    const changed = keys.map((key) => ({ key, before: this.get(key) }));
    for (const key of keys) this.store.set(key, { value: this.get(key) as string, expiresAt });
    return { result: true, changed };
  }

  /** @internal
   * release.lua: deletes each key still holding `value` (marked or not) and
   * hands it to its line's live head (a reservation, announced with the
   * head's value), or announces the deletion as `announce` says; returns how many.
   */
  applyRelease(keys: readonly string[], value: string, announce: Announce = 'marked'): { result: number; changed: Changed } {
    return this.releaseKeys(keys, value, announce);
  }

  /** @internal release.lua with a rejoin: the place is restored (if the line is there) before the key is handed on. */
  applyUndoInLine(keys: readonly string[], value: string, rejoin: Rejoin): { result: UndoneInLine; changed: Changed } {
    const { result, changed, rejoinedAtUs } = this.releaseKeys(keys, value, 'none', rejoin);
    return { result: rejoinedAtUs === undefined ? { released: result } : { released: result, rejoinedAtUs }, changed };
  }

  private releaseKeys(
    keys: readonly string[],
    value: string,
    announce: Announce,
    rejoin?: Rejoin,
  ): { result: number; changed: Changed; rejoinedAtUs?: number } {
    let rejoinedAtUs: number | undefined;
    const changed: { key: string; before: string | undefined }[] = [];
    // releasePlain.lua leaves a key a waiter marked to release.lua (its caller retries so).
    if (announce === 'plain' && keys.some((key) => this.get(key) === value + WAITER_MARK)) announce = 'marked';
    for (const key of keys) {
      const current = this.get(key);
      if (!holds(current, value)) continue;
      this.store.delete(key);
      changed.push({ key, before: current });
      let handed = false;
      const line = this.line(key);
      // release.lua looks for a line only when the key was marked or someone of ours waits.
      const waited = announce !== 'plain' && (announce !== 'marked' || isMarked(current));
      if (line && waited) {
        const nowMs = this.serverTime.now();
        if (rejoin) {
          line.order.set(value, rejoin.ticket);
          line.lease.set(value, nowMs + rejoin.leaseMs);
          rejoinedAtUs = this.serverUs(nowMs);
        }
        handed = this.handOff(key, nowMs, RESERVATION_MS);
      }
      const heard = announce === 'all' || ((announce === 'marked' || announce === 'plain') && isMarked(current));
      if (!handed && heard) this.publish(key, '');
    }
    return { result: changed.length, changed, rejoinedAtUs };
  }

  /** @internal keepalive.lua: refreshes the lease (and raises the ticket) of every entry that still has its place. */
  applyKeepalive(entries: readonly LineEntry[], leaseMs: number): { result: number; changed: Changed } {
    const nowMs = this.serverTime.now();
    let kept = 0;
    for (const { keys, value, ticket } of entries) {
      for (const key of keys) {
        const line = this.line(key);
        const score = line?.order.get(value);
        if (line === undefined || score === undefined) continue;
        kept++;
        if (ticket > score) {
          line.order.set(value, ticket);
          if ((this.counter(key) ?? 0) < ticket) this.setCounter(key, ticket, leaseMs);
        }
        line.lease.set(value, nowMs + leaseMs);
        line.expiresAt = this.clock.now() + leaseMs;
        const counter = this.counter(key);
        if (counter !== undefined) this.setCounter(key, counter, leaseMs);
      }
    }
    return { result: kept, changed: [] };
  }

  /** @internal leave.lua: out of the lines; one that gave up hands on a reservation it did not take. */
  applyLeave(keys: readonly string[], value: string, acquired: boolean): { result: number; changed: Changed } {
    let left = 0;
    const changed: { key: string; before: string | undefined }[] = [];
    for (const key of keys) {
      if (this.line(key)?.order.has(value)) left++;
      this.leaveLine(key, value);
      const current = this.get(key);
      if (!acquired && holds(current, value)) {
        this.store.delete(key);
        changed.push({ key, before: current });
        this.handOff(key, this.serverTime.now(), RESERVATION_MS);
      }
    }
    return { result: left, changed };
  }

  // --- wait lines ------------------------------------------------------------

  /** @internal The live line of `key` (undefined once it expired or emptied). */
  line(key: string): WaitLine | undefined {
    const line = this.lines.get(key);
    if (line === undefined) return undefined;
    if (line.expiresAt <= this.clock.now() || line.order.size === 0) {
      this.lines.delete(key);
      return undefined;
    }
    return line;
  }

  /** The waiters of `key`'s line, first first (ZRANGE: by ticket, ties by value). */
  lineOrder(key: string): string[] {
    const line = this.line(key);
    if (!line) return [];
    return [...line.order].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0)).map(([value]) => value);
  }

  private openLine(key: string): WaitLine {
    let line = this.line(key);
    if (!line) {
      line = { order: new Map(), lease: new Map(), expiresAt: Number.POSITIVE_INFINITY };
      this.lines.set(key, line);
    }
    return line;
  }

  private leaveLine(key: string, value: string): void {
    const line = this.line(key);
    if (!line) return;
    line.order.delete(value);
    line.lease.delete(value);
  }

  /** line.lua's first_live: drops waiters at the front whose lease passed. */
  private firstLive(key: string, nowMs: number): string | undefined {
    for (;;) {
      const head = this.lineOrder(key)[0];
      if (head === undefined) return undefined;
      const line = this.line(key) as WaitLine;
      if ((line.lease.get(head) ?? Number.NEGATIVE_INFINITY) > nowMs) return head;
      line.order.delete(head);
      line.lease.delete(head);
    }
  }

  /** line.lua's hand_off. */
  private handOff(key: string, nowMs: number, reservationMs: number): boolean {
    const head = this.firstLive(key, nowMs);
    if (head === undefined) return false;
    const behind = (this.line(key)?.order.size ?? 0) > 1;
    this.store.set(key, { value: behind ? head + WAITER_MARK : head, expiresAt: this.clock.now() + reservationMs });
    // line.lua's announce_handoff: to the waiter's process, stamped, when its value has a tag.
    const tag = /^([0-9a-f]+)\./.exec(head)?.[1];
    if (tag === undefined) this.publish(key, head);
    else this.publish(key, `${head} ${this.serverUs(nowMs)} ${reservationMs} ${key}`, `${HANDOFF_CHANNEL_PREFIX}${tag}`);
    return true;
  }

  private counter(key: string): number | undefined {
    const counter = this.counters.get(key);
    if (counter === undefined || counter.expiresAt <= this.clock.now()) return undefined;
    return counter.value;
  }

  private setCounter(key: string, value: number, ttlMs: number): void {
    this.counters.set(key, { value, expiresAt: this.clock.now() + ttlMs });
  }

  private take(keys: readonly string[], value: string, ttlMs: number): Changed {
    const expiresAt = this.clock.now() + ttlMs;
    const changed = keys.map((key) => ({ key, before: this.get(key) }));
    for (const key of keys) this.store.set(key, { value: this.get(key) ?? value, expiresAt });
    return changed;
  }

  // --- inspection and faults -------------------------------------------------

  /** The value at `key`, or undefined when missing or expired (as GET sees it). */
  get(key: string): string | undefined {
    const entry = this.store.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.clock.now()) {
      this.store.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** As Redis PTTL: milliseconds left, or -2 when the key is missing (every lock key has a TTL). */
  pttl(key: string): number {
    const entry = this.store.get(key);
    if (entry === undefined || this.get(key) === undefined) return -2;
    return entry.expiresAt - this.clock.now();
  }

  /** Every live key's name as Redis would list it: lock keys, and each line's line, lease and ticket keys. */
  keyNames(): string[] {
    const names = [...this.snapshot().keys()];
    for (const key of [...this.lines.keys()]) {
      if (!this.line(key)) continue;
      const [line, lease] = lineKeysFor(key);
      names.push(line, lease);
    }
    for (const key of [...this.counters.keys()]) if (this.counter(key) !== undefined) names.push(lineKeysFor(key)[2]);
    return names;
  }

  /** Live keys with their values. */
  snapshot(): Map<string, string> {
    const live = new Map<string, string>();
    for (const key of [...this.store.keys()]) {
      const value = this.get(key);
      if (value !== undefined) live.set(key, value);
    }
    return live;
  }

  /** Node-clock instant from which the node takes requests again after a delayed restart. */
  get availableAt(): number {
    return this.downUntil;
  }

  /** True while the node refuses requests after a delayed restart. */
  get isDown(): boolean {
    return this.clock.now() < this.downUntil;
  }

  /**
   * The process restarts with an empty dataset (no persistence): every key is
   * gone, requests not yet applied are dropped and replies not yet delivered
   * fail (the connection broke). With `downForMs` the node refuses requests
   * that long, as the Redlock spec's delayed restart asks for.
   */
  restart(options: { downForMs?: number } = {}): void {
    this.store.clear();
    this.lines.clear();
    this.counters.clear();
    this.epoch++;
    this.downUntil = this.clock.now() + (options.downForMs ?? 0);
  }

  // --- one connection ---------------------------------------------------------

  private send<T extends boolean | number | LineReply | UndoneInLine>(
    request: Omit<SimulatedRequest, 'seq'>,
    apply: () => { result: T; changed: Changed },
  ): Promise<T> {
    const sent: SimulatedRequest = { ...request, seq: ++this.seq };
    const plan: Required<RequestPlan> = { ...ANSWER_AT_ONCE, ...this.planner(sent) };
    const record: RequestRecord = { ...sent, keys: [...sent.keys], plan };
    this.requests.push(record);
    const epoch = this.epoch;

    // Applied in sending order: after its own delay and after the request before it.
    const applied = Promise.all([this.applyTail, delay(plan.applyAfterMs)]).then(() => {
      if (epoch !== this.epoch) return (record.failure = 'connection lost in a restart before it was applied');
      if (plan.fate === 'fail-before') return (record.failure = 'failed before it was applied');
      if (this.isDown) return (record.failure = 'node down after a restart');
      try {
        const { result, changed } = apply();
        record.appliedAt = this.clock.now();
        record.result = result;
        record.changed = changed;
      } catch (error) {
        record.failure = error instanceof Error ? error.message : String(error);
      }
      return undefined;
    });
    this.applyTail = applied.then(() => undefined);

    // Answered in sending order: after its own reply delay and after the reply before it.
    const answered = Promise.all([applied, this.replyTail, applied.then(() => delay(plan.replyAfterMs))]);
    this.replyTail = answered.then(() => undefined);

    return new Promise<T>((resolve, reject) => {
      void answered.then(() => {
        if (plan.fate === 'lose-reply') return;
        if (epoch !== this.epoch) {
          reject(new InMemoryNodeError(this.name, 'connection reset (node restarted)'));
        } else if (record.failure !== undefined) {
          reject(new InMemoryNodeError(this.name, record.failure));
        } else if (plan.fate === 'fail-after') {
          reject(new InMemoryNodeError(this.name, 'connection reset after the request was applied'));
        } else {
          resolve(record.result as T);
        }
      });
    });
  }
}

type Changed = readonly { key: string; before: string | undefined }[];

/** Whether `stored` is `value`, with or without a waiter's mark. */
export function holds(stored: string | undefined, value: string): stored is string {
  return stored === value || stored === value + WAITER_MARK;
}

/** SET ... PX and PEXPIRE reject anything but a positive integer. */
function assertTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new Error(`ERR invalid expire time in 'set' command`);
}

/** A zero delay stays off the timer queue, so instant nodes need no timers at all. */
function delay(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
