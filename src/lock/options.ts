import { type Clock, monotonicClock } from '../clock/Clock.js';
import type { ReplicaSync } from '../node/replicaSync.js';
import {
  assertInteger,
  assertNumber,
  assertOptionsObject,
  assertSignal,
  MAX_TTL_MS,
} from './validate.js';
import { describe } from '../shared/describe.js';
import { InvalidArgumentError } from '../shared/errors.js';

/** How acquire() waits between attempts: exponential backoff with full jitter. */
export interface RetryOptions {
  /**
   * Attempts after the first. The wait is bounded by `acquireTimeoutMs` too.
   * @default Infinity
   */
  readonly retries?: number;
  /**
   * Upper bound of the first wait, in milliseconds; each later bound is
   * `factor` times larger. Each wait is drawn at random up to its bound.
   * @default 25
   */
  readonly baseDelayMs?: number;
  /**
   * Largest bound of any wait, in milliseconds.
   * @default 400
   */
  readonly maxDelayMs?: number;
  /**
   * Growth of the bound from one wait to the next (1 keeps it at `baseDelayMs`).
   * @default 2
   */
  readonly factor?: number;
}

/**
 * Replica sync: a node's grant (acquire, extend, fencing write-back) counts
 * as a vote only once Redis `WAIT` confirms that this many of its replicas
 * have the write. Sent on the same connection right behind the write.
 */
export interface ReplicaSyncOptions {
  /** Replicas of every node that must acknowledge a grant's write (1 or more). Required. */
  readonly replicas: number;
  /**
   * How long WAIT may wait for them, in milliseconds. A synced request has `nodeTimeoutMs +
   * timeoutMs + 2 × serverTickMs` to answer, so that a WAIT the server
   * notices late is still reported as a short sync (REPLICA_SYNC), not a
   * silent node.
   * @default half of nodeTimeoutMs, rounded down (25 ms)
   */
  readonly timeoutMs?: number;
  /**
   * 1000 / `hz` of the servers, in milliseconds: Redis checks WAIT's timeout on its cron
   * tick, so an idle server with `hz 10` answers a WAIT that timed out up to
   * 100 ms late. Set it from your servers' `hz` (CONFIG GET hz); on a busy
   * server WAIT usually ends on time, but only the tick is promised.
   * @default 100 (Redis's default hz 10)
   */
  readonly serverTickMs?: number;
}

/**
 * Options of a locker (RedisLock, Redlock; the semaphore's and read-write
 * lock's options extend them). Every field is optional; the defaults are in
 * {@link DEFAULT_OPTIONS}. A bad value throws {@link InvalidArgumentError}
 * naming the option when the locker is built.
 */
export interface LockerOptions {
  /**
   * Fraction of the TTL by which node clocks may run apart from ours; with
   * `driftMs`, it is taken off every lock's validity. From 0 to 0.5.
   * @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * Fixed drift allowance in milliseconds, added to `ttlMs * driftFactor`.
   * @default 2
   */
  readonly driftMs?: number;
  /**
   * Time one node has to answer one request, in milliseconds (an integer); a
   * later reply never counts. Keep it well under the TTL. It is also capped
   * at the TTL of each call.
   * @default 50
   */
  readonly nodeTimeoutMs?: number;
  /**
   * How long acquire() and using() keep trying before they give up with the
   * last attempt's error, in milliseconds (an integer, or `Infinity`).
   * `Infinity` waits until the signal aborts; 0 makes one attempt.
   * @default 10000
   */
  readonly acquireTimeoutMs?: number;
  /**
   * Backoff between acquire attempts; fields left out keep their defaults
   * ({@link DEFAULT_RETRY}).
   * @default DEFAULT_RETRY: `{ retries: Infinity, baseDelayMs: 25, maxDelayMs: 400, factor: 2 }`
   */
  readonly retry?: RetryOptions;
  /**
   * In using(), the lock is extended once this fraction of its validity has
   * passed, and retried within the rest of it. Unset, the time kept for
   * retries is half the validity up to 3 s, then 3 s, and at least a fifth
   * of the validity (see renewalReserveMs): 0.5 for locks of up to ~6 s,
   * ~0.7 for 10 s, 0.8 from 15 s on. From 0.05 to 0.95.
   * @default undefined
   */
  readonly extendAtFraction?: number;
  /**
   * Hand every lock a fencing token (`lock.fencingToken`) that strictly
   * increases across successive holders of a resource. Costs one counter key
   * per resource, and on Redlock one more round trip when the nodes disagree.
   * @default false
   */
  readonly fencing?: boolean;
  /**
   * Waiters listen for release announcements (one SUBSCRIBE connection per
   * node for the whole process) and retry at once instead of only polling,
   * and this process's waiters on one resource line up so only the first asks
   * Redis. `false` leaves waiting to backoff polling alone.
   * @default true
   */
  readonly wakeUp?: boolean;
  /**
   * A call of this locker inside a routine that already holds the resources
   * through it (in `using()` or `lock.scope()`) re-enters that lock instead of
   * waiting for it: no round trip, one more hold on the same lock. `false`
   * makes every call an independent holder, which then waits for the routine's
   * own lock like anyone else's.
   * @default true
   */
  readonly reentrant?: boolean;
  /**
   * Count a node's grant only once this many of its replicas acknowledged
   * the write (Redis WAIT), so that a failover to one of them keeps the
   * lock. Off by default. Standalone (or Sentinel-managed) clients only.
   * @default undefined (off)
   */
  readonly syncReplicas?: ReplicaSyncOptions;
  /**
   * The source of monotonic milliseconds: an object whose `now()` returns
   * them, such as `performance` itself or `{ now: () => fakeMs }` in tests.
   * @default an object whose now() returns performance.now()
   */
  readonly clock?: Clock;
}

/** Options of one acquire() call. */
export interface AcquireOptions {
  /**
   * Aborting stops waiting; the call rejects with {@link AbortedError}.
   * @default undefined (no signal)
   */
  readonly signal?: AbortSignal;
  /**
   * Overrides the locker's `acquireTimeoutMs` for this call, in milliseconds.
   * @default the locker's `acquireTimeoutMs`
   */
  readonly acquireTimeoutMs?: number;
  /**
   * Overrides fields of the locker's `retry` for this call.
   * @default the locker's `retry`
   */
  readonly retry?: RetryOptions;
}

/** Options of one tryAcquire() call. */
export interface TryAcquireOptions {
  /**
   * Aborting stops the attempt (its wait for a node's first connection);
   * the call rejects with {@link AbortedError}.
   * @default undefined (no signal)
   */
  readonly signal?: AbortSignal;
}

/** Options of using(): those of acquire(), which it calls first. */
export type UsingOptions = AcquireOptions;

/** For inspect(): `signal` stops the wait for a node's first connection. */
export type InspectOptions = TryAcquireOptions;

/** {@link RetryOptions} with every field set. */
export interface ResolvedRetry {
  /** See {@link RetryOptions.retries}. */
  readonly retries: number;
  /** See {@link RetryOptions.baseDelayMs}. */
  readonly baseDelayMs: number;
  /** See {@link RetryOptions.maxDelayMs}. */
  readonly maxDelayMs: number;
  /** See {@link RetryOptions.factor}. */
  readonly factor: number;
}

/** As the node requests take it (node/replicaSync.ts). */
export type ResolvedReplicaSync = ReplicaSync;

/** {@link LockerOptions} with every field set, as a locker runs with them. */
export interface ResolvedOptions {
  /** See {@link LockerOptions.driftFactor}. */
  readonly driftFactor: number;
  /** See {@link LockerOptions.driftMs}. */
  readonly driftMs: number;
  /** See {@link LockerOptions.nodeTimeoutMs}. */
  readonly nodeTimeoutMs: number;
  /** See {@link LockerOptions.acquireTimeoutMs}. */
  readonly acquireTimeoutMs: number;
  /** See {@link LockerOptions.retry}. */
  readonly retry: ResolvedRetry;
  /** See {@link LockerOptions.extendAtFraction}; undefined: the default reserve of time it describes. */
  readonly extendAtFraction: number | undefined;
  /** See {@link LockerOptions.fencing}. */
  readonly fencing: boolean;
  /** See {@link LockerOptions.wakeUp}. */
  readonly wakeUp: boolean;
  /** See {@link LockerOptions.reentrant}. */
  readonly reentrant: boolean;
  /** See {@link LockerOptions.syncReplicas}; undefined when off. */
  readonly syncReplicas: ResolvedReplicaSync | undefined;
  /** See {@link LockerOptions.clock}. */
  readonly clock: Clock;
}

/**
 * The retry policy a locker uses unless `retry` says otherwise (frozen):
 * each field's `@default` in {@link RetryOptions}.
 */
export const DEFAULT_RETRY: ResolvedRetry = Object.freeze({
  retries: Number.POSITIVE_INFINITY,
  baseDelayMs: 25,
  maxDelayMs: 400,
  factor: 2,
});

/**
 * Every {@link LockerOptions} default, as a locker resolves them (frozen):
 * each option's `@default` there. Read it, for instance, to derive a
 * timeout from `DEFAULT_OPTIONS.nodeTimeoutMs`.
 */
export const DEFAULT_OPTIONS: ResolvedOptions = Object.freeze({
  driftFactor: 0.01,
  driftMs: 2,
  nodeTimeoutMs: 50,
  acquireTimeoutMs: 10_000,
  retry: DEFAULT_RETRY,
  extendAtFraction: undefined,
  fencing: false,
  wakeUp: true,
  reentrant: true,
  syncReplicas: undefined,
  clock: monotonicClock,
});

const LOCKER_KEYS = ['driftFactor', 'driftMs', 'nodeTimeoutMs', 'acquireTimeoutMs', 'retry', 'extendAtFraction', 'fencing', 'wakeUp', 'reentrant', 'syncReplicas', 'clock'];
const RETRY_KEYS = ['retries', 'baseDelayMs', 'maxDelayMs', 'factor'];
const SYNC_KEYS = ['replicas', 'timeoutMs', 'serverTickMs'];
/** Redis's default hz 10. */
const DEFAULT_SERVER_TICK_MS = 100;
const ACQUIRE_KEYS = ['signal', 'acquireTimeoutMs', 'retry'];

export function resolveLockerOptions(options: unknown, argument = 'options'): ResolvedOptions {
  assertOptionsObject(options, argument, LOCKER_KEYS);
  if (options === undefined) return DEFAULT_OPTIONS;
  const o = options as LockerOptions;
  const resolved: ResolvedOptions = {
    driftFactor: o.driftFactor ?? DEFAULT_OPTIONS.driftFactor,
    driftMs: o.driftMs ?? DEFAULT_OPTIONS.driftMs,
    nodeTimeoutMs: o.nodeTimeoutMs ?? DEFAULT_OPTIONS.nodeTimeoutMs,
    acquireTimeoutMs: o.acquireTimeoutMs ?? DEFAULT_OPTIONS.acquireTimeoutMs,
    retry: resolveRetry(o.retry, DEFAULT_RETRY, `${argument}.retry`),
    extendAtFraction: o.extendAtFraction ?? DEFAULT_OPTIONS.extendAtFraction,
    fencing: o.fencing ?? DEFAULT_OPTIONS.fencing,
    wakeUp: o.wakeUp ?? DEFAULT_OPTIONS.wakeUp,
    reentrant: o.reentrant ?? DEFAULT_OPTIONS.reentrant,
    syncReplicas: resolveReplicaSync(o.syncReplicas, nodeTimeoutMsOf(o), `${argument}.syncReplicas`),
    clock: o.clock ?? DEFAULT_OPTIONS.clock,
  };
  assertNumber(resolved.driftFactor, `${argument}.driftFactor`, 0, 0.5);
  assertNumber(resolved.driftMs, `${argument}.driftMs`, 0, MAX_TTL_MS);
  assertInteger(resolved.nodeTimeoutMs, `${argument}.nodeTimeoutMs`, 1, MAX_TTL_MS);
  assertAcquireTimeout(resolved.acquireTimeoutMs, `${argument}.acquireTimeoutMs`);
  if (resolved.extendAtFraction !== undefined) assertNumber(resolved.extendAtFraction, `${argument}.extendAtFraction`, 0.05, 0.95);
  for (const flag of ['fencing', 'wakeUp', 'reentrant'] as const) {
    if (typeof resolved[flag] !== 'boolean') {
      throw new InvalidArgumentError(`${argument}.${flag}`, `expected true or false, got ${describe(resolved[flag])}`);
    }
  }
  if (typeof resolved.clock === 'function') {
    // A bare function is refused rather than called: the one users reach for,
    // performance.now, throws when called without its object.
    throw new InvalidArgumentError(
      `${argument}.clock`,
      'expected an object with a now() method, got a function: pass { now: yourFunction }, or performance itself',
    );
  }
  if (typeof resolved.clock?.now !== 'function') {
    throw new InvalidArgumentError(`${argument}.clock`, `expected an object with a now() method, got ${describe(resolved.clock)}`);
  }
  const sample: unknown = resolved.clock.now();
  if (typeof sample !== 'number' || !Number.isFinite(sample)) {
    throw new InvalidArgumentError(`${argument}.clock`, `now() must return finite milliseconds, returned ${describe(sample)}`);
  }
  return Object.freeze(resolved);
}

export interface ResolvedAcquire {
  readonly signal: AbortSignal | undefined;
  readonly acquireTimeoutMs: number;
  readonly retry: ResolvedRetry;
}

export function resolveAcquireOptions(options: unknown, defaults: ResolvedOptions, argument = 'options'): ResolvedAcquire {
  assertOptionsObject(options, argument, ACQUIRE_KEYS);
  const o = (options ?? {}) as AcquireOptions;
  assertSignal(o.signal, `${argument}.signal`);
  const acquireTimeoutMs = o.acquireTimeoutMs ?? defaults.acquireTimeoutMs;
  assertAcquireTimeout(acquireTimeoutMs, `${argument}.acquireTimeoutMs`);
  return {
    signal: o.signal,
    acquireTimeoutMs,
    retry: o.retry === undefined ? defaults.retry : resolveRetry(o.retry, defaults.retry, `${argument}.retry`),
  };
}

export function resolveTryAcquireOptions(options: unknown, argument = 'options'): AbortSignal | undefined {
  assertOptionsObject(options, argument, ['signal']);
  const signal = (options as TryAcquireOptions | undefined)?.signal;
  assertSignal(signal, `${argument}.signal`);
  return signal;
}

function nodeTimeoutMsOf(options: LockerOptions): number {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? DEFAULT_OPTIONS.nodeTimeoutMs;
  // The node timeout is checked on its own below; a bad one must be reported as itself.
  return typeof nodeTimeoutMs === 'number' && Number.isInteger(nodeTimeoutMs) ? nodeTimeoutMs : DEFAULT_OPTIONS.nodeTimeoutMs;
}

function resolveReplicaSync(options: unknown, nodeTimeoutMs: number, argument: string): ResolvedReplicaSync | undefined {
  if (options === undefined) return undefined;
  assertOptionsObject(options, argument, SYNC_KEYS);
  const o = options as unknown as ReplicaSyncOptions;
  assertInteger(o.replicas, `${argument}.replicas`, 1, 1000);
  const timeoutMs = o.timeoutMs ?? Math.max(1, Math.floor(nodeTimeoutMs / 2));
  assertInteger(timeoutMs, `${argument}.timeoutMs`, 1, MAX_TTL_MS);
  // Redis takes hz from 1 to 500.
  const serverTickMs = o.serverTickMs ?? DEFAULT_SERVER_TICK_MS;
  assertInteger(serverTickMs, `${argument}.serverTickMs`, 2, 1000);
  return Object.freeze({ replicas: o.replicas, timeoutMs, serverTickMs });
}

function resolveRetry(options: unknown, defaults: ResolvedRetry, argument: string): ResolvedRetry {
  assertOptionsObject(options, argument, RETRY_KEYS);
  if (options === undefined) return defaults;
  const o = options as RetryOptions;
  const retry: ResolvedRetry = {
    retries: o.retries ?? defaults.retries,
    baseDelayMs: o.baseDelayMs ?? defaults.baseDelayMs,
    maxDelayMs: o.maxDelayMs ?? defaults.maxDelayMs,
    factor: o.factor ?? defaults.factor,
  };
  if (retry.retries !== Number.POSITIVE_INFINITY) assertInteger(retry.retries, `${argument}.retries`, 0, Number.MAX_SAFE_INTEGER);
  assertNumber(retry.baseDelayMs, `${argument}.baseDelayMs`, 0, MAX_TTL_MS);
  assertNumber(retry.maxDelayMs, `${argument}.maxDelayMs`, retry.baseDelayMs, MAX_TTL_MS);
  assertNumber(retry.factor, `${argument}.factor`, 1, 100);
  return Object.freeze(retry);
}

function assertAcquireTimeout(value: unknown, argument: string): void {
  if (value === Number.POSITIVE_INFINITY) return;
  assertInteger(value, argument, 0, MAX_TTL_MS);
}
