/**
 * A Redis node simulated in memory, for property tests: it implements
 * NodeBackend with the semantics of src/scripts/{acquire,extend,release}.lua
 * (test/property/simulatedNode.test.ts checks it against a real redis-server),
 * on an injected clock, with faults planned per request.
 *
 *   const node = new SimulatedNode('n1', clock);          // FakeClock, or fake-timer time
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
import type { Clock } from '../../src/clock/Clock.js';
import type { NodeBackend } from '../../src/node/NodeBackend.js';
import type { Announce } from '../../src/scripts/release.js';
import { isMarked, WAITER_MARK } from '../../src/scripts/waiterMark.js';

export type SimulatedOperation = 'acquire' | 'extend' | 'release';

/**
 * What happens to one request:
 * - 'reply': applied, then answered;
 * - 'lose-reply': applied, the reply never comes (a dropped reply, a partition after the request);
 * - 'fail-before': rejected without being applied (connection refused or reset before sending);
 * - 'fail-after': applied, then rejected (connection reset after the request was applied).
 */
export type RequestFate = 'reply' | 'lose-reply' | 'fail-before' | 'fail-after';

export interface RequestPlan {
  /** Milliseconds from sending until the node applies it (later if an earlier request is still queued). */
  readonly applyAfterMs?: number;
  /** Milliseconds from applying until the reply (or the failure) reaches the caller. */
  readonly replyAfterMs?: number;
  readonly fate?: RequestFate;
}

export interface SimulatedRequest {
  /** 1, 2, 3, ... in the order requests were sent to this node. */
  readonly seq: number;
  readonly op: SimulatedOperation;
  readonly keys: readonly string[];
  readonly value: string;
  readonly ttlMs?: number;
}

/** Decides each request's delays and fate; the default applies and answers at once. */
export type RequestPlanner = (request: SimulatedRequest) => RequestPlan;

/** What became of a request, filled in as it progresses. */
export interface RequestRecord extends SimulatedRequest {
  readonly plan: Required<RequestPlan>;
  /** Node-clock instant it was applied, if it was. */
  appliedAt?: number;
  /** The script's result, if applied: boolean for acquire/extend, the count for release. */
  result?: boolean | number;
  /** Keys the request wrote or deleted, with the value they held before. */
  changed?: readonly { key: string; before: string | undefined }[];
  /** Why it was not applied or not answered. */
  failure?: string;
}

interface Entry {
  readonly value: string;
  /** Node-clock instant at which the key is gone. */
  readonly expiresAt: number;
}

export class SimulatedNodeError extends Error {
  constructor(node: string, problem: string) {
    super(`${node}: ${problem}`);
    this.name = 'SimulatedNodeError';
  }
}

const ANSWER_AT_ONCE: Required<RequestPlan> = Object.freeze({ applyAfterMs: 0, replyAfterMs: 0, fate: 'reply' });

export class SimulatedNode implements NodeBackend {
  readonly name: string;
  /** The node's own clock: expiry is counted on it (give it a skewed one to model a fast node). */
  readonly clock: Clock;
  planner: RequestPlanner;
  /** Every request sent to this node, in order. */
  readonly requests: RequestRecord[] = [];

  private readonly store = new Map<string, Entry>();
  /** Release announcements (release.lua PUBLISHes each key it deletes): listeners by key. */
  private readonly watchers = new Map<string, Set<() => void>>();
  private seq = 0;
  /** Bumped by restart(): requests from an older epoch are never applied or answered. */
  private epoch = 0;
  private downUntil = Number.NEGATIVE_INFINITY;
  /** Resolves when the previously sent request has been applied (or dropped). */
  private applyTail: Promise<void> = Promise.resolve();
  /** Resolves when the previous reply has been delivered (or dropped). */
  private replyTail: Promise<void> = Promise.resolve();

  constructor(name: string, clock: Clock, planner: RequestPlanner = () => ANSWER_AT_ONCE) {
    this.name = name;
    this.clock = clock;
    this.planner = planner;
  }

  // --- NodeBackend -----------------------------------------------------------

  acquire(keys: readonly string[], value: string, ttlMs: number, markIfHeld = false): Promise<boolean> {
    return this.send({ op: 'acquire', keys, value, ttlMs }, () => this.applyAcquire(keys, value, ttlMs, markIfHeld));
  }

  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
    return this.send({ op: 'extend', keys, value, ttlMs }, () => this.applyExtend(keys, value, ttlMs));
  }

  release(keys: readonly string[], value: string, announce: Announce = 'marked'): Promise<number> {
    return this.send({ op: 'release', keys, value }, () => this.applyRelease(keys, value, announce));
  }

  /** As RedisNodeBackend.watchReleases: `onRelease` hears every key a release deletes here. */
  watchReleases(keys: readonly string[], onRelease: () => void): Promise<() => void> {
    for (const key of keys) {
      let listeners = this.watchers.get(key);
      if (!listeners) this.watchers.set(key, (listeners = new Set()));
      listeners.add(onRelease);
    }
    return Promise.resolve(() => {
      for (const key of keys) this.watchers.get(key)?.delete(onRelease);
    });
  }

  // --- the three scripts, applied at once --------------------------------------

  /**
   * acquire.lua: all keys or none; true when every key now holds `value`
   * (marked or not: a mark is kept). One key without `markIfHeld` is a SET NX
   * PX, which refuses a key holding our own value too. With `markIfHeld` the
   * first key held by another value gets the waiter's mark.
   */
  applyAcquire(keys: readonly string[], value: string, ttlMs: number, markIfHeld = false): { result: boolean; changed: Changed } {
    assertTtl(ttlMs);
    if (!markIfHeld && keys.length === 1 && this.get(keys[0] as string) !== undefined) return { result: false, changed: [] };
    for (const key of keys) {
      const current = this.get(key);
      if (current !== undefined && !holds(current, value)) {
        if (!markIfHeld || isMarked(current)) return { result: false, changed: [] };
        const entry = this.store.get(key) as Entry;
        this.store.set(key, { value: current + WAITER_MARK, expiresAt: entry.expiresAt });
        return { result: false, changed: [{ key, before: current }] };
      }
    }
    const expiresAt = this.clock.now() + ttlMs;
    const changed = keys.map((key) => ({ key, before: this.get(key) }));
    for (const key of keys) this.store.set(key, { value: this.get(key) ?? value, expiresAt });
    return { result: true, changed };
  }

  /** extend.lua: new TTL on every key, only if every key holds `value` (marked or not). */
  applyExtend(keys: readonly string[], value: string, ttlMs: number): { result: boolean; changed: Changed } {
    assertTtl(ttlMs);
    for (const key of keys) if (!holds(this.get(key), value)) return { result: false, changed: [] };
    const expiresAt = this.clock.now() + ttlMs;
    const changed = keys.map((key) => ({ key, before: this.get(key) }));
    for (const key of keys) this.store.set(key, { value: this.get(key) as string, expiresAt });
    return { result: true, changed };
  }

  /** release.lua: deletes each key still holding `value` (marked or not); returns how many. */
  applyRelease(keys: readonly string[], value: string, announce: Announce = 'marked'): { result: number; changed: Changed } {
    const changed: { key: string; before: string }[] = [];
    for (const key of keys) {
      const current = this.get(key);
      if (holds(current, value)) {
        this.store.delete(key);
        changed.push({ key, before: current });
        // Pub/sub messages travel on the subscriber's own connection: they arrive after the script ran.
        const heard = announce === 'all' || (announce === 'marked' && isMarked(current));
        if (heard) for (const listener of this.watchers.get(key) ?? []) queueMicrotask(listener);
      }
    }
    return { result: changed.length, changed };
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
    this.epoch++;
    this.downUntil = this.clock.now() + (options.downForMs ?? 0);
  }

  // --- one connection ---------------------------------------------------------

  private send<T extends boolean | number>(
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
          reject(new SimulatedNodeError(this.name, 'connection reset (node restarted)'));
        } else if (record.failure !== undefined) {
          reject(new SimulatedNodeError(this.name, record.failure));
        } else if (plan.fate === 'fail-after') {
          reject(new SimulatedNodeError(this.name, 'connection reset after the request was applied'));
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
