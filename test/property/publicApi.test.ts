/**
 * Arbitrary inputs to every public call never throw anything but our typed
 * errors (QuorumLockError subclasses), and never leave an unhandled rejection:
 * constructors (with real ioredis clients among junk), acquire, tryAcquire,
 * using, extend and release, with options objects made of valid, borderline
 * and nonsense values. A routine's own error is the one exception: using()
 * must hand it back untouched.
 *
 * Constructors and single attempts run against a real redis-server; acquire
 * and using (which may retry for as long as the options say) run on simulated
 * nodes on fake timers, so a 24-day acquire timeout costs nothing.
 */
import type { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, InvalidArgumentError, isQuorumLockError, type Lock, RedisLock, Redlock } from '../../src/index.js';
import { MAX_TTL_MS } from '../../src/lock/validate.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { checkProperty, fullRun, report, timeoutFor } from './fcConfig.js';
import { simulatedCluster } from './simulatedCluster.js';

// --- arbitraries --------------------------------------------------------------------


const junkArb = fc.oneof(
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withNullPrototype: true,
    withObjectString: true,
    withSet: true,
    withSparseArray: true,
    withTypedArray: true,
    withUnicodeString: true,
  }),
  fc.constantFrom<unknown>(
    Symbol('s'),
    () => 1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    new AbortController().signal,
    { now: 'not a function' },
    Object.create(null),
    { constructor: { name: Symbol('odd') } },
  ),
);

/** Numbers around every bound the validation has. */
const numberArb = fc.oneof(
  fc.integer({ min: -5, max: 2_000 }),
  fc.double({ min: -1, max: 2 }),
  fc.constantFrom(0, 1, 0.05, 0.5, 0.95, 100, MAX_TTL_MS, MAX_TTL_MS + 1, Number.MAX_SAFE_INTEGER, Number.NaN, Infinity, -Infinity),
);
const valueArb = fc.oneof({ weight: 4, arbitrary: numberArb }, { weight: 1, arbitrary: junkArb });

/**
 * Valid options, the same with one field spoiled (or an unknown key added), or junk: each
 * kind often enough that the calls both run and get refused.
 */
function optionsArb<T extends Record<string, unknown>>(valid: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<unknown> {
  const validArb = fc.record(valid, { requiredKeys: [] });
  const keys = Object.keys(valid);
  const spoiled = fc
    .tuple(validArb, fc.constantFrom(...keys, 'retryCount', 'retryDelay', 'ttl'), valueArb)
    .map(([options, key, bad]) => ({ ...options, [key]: bad }));
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: validArb },
    { weight: 2, arbitrary: spoiled },
    { weight: 1, arbitrary: junkArb },
  );
}

const retryArb = optionsArb({
  retries: fc.oneof(fc.nat(5), fc.constant(Number.POSITIVE_INFINITY)),
  baseDelayMs: fc.integer({ min: 0, max: 50 }),
  maxDelayMs: fc.integer({ min: 50, max: 400 }),
  factor: fc.double({ min: 1, max: 3, noNaN: true }),
});



/** Clocks that work (from an odd origin too), or (rarely) one whose now() returns garbage. */
const clockArb = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ now: () => performance.now() }) },
  { weight: 1, arbitrary: fc.constant({ now: () => performance.now() + 1e12 }) },
  { weight: 1, arbitrary: fc.func(junkArb).map((now) => ({ now })) },
);

const lockerOptionsArb = optionsArb({
  driftFactor: fc.double({ min: 0, max: 0.5, noNaN: true }),
  driftMs: fc.nat(10),
  nodeTimeoutMs: fc.integer({ min: 1, max: 2_000 }),
  acquireTimeoutMs: fc.oneof(fc.nat(1_000), fc.constant(Number.POSITIVE_INFINITY)),
  retry: retryArb,
  extendAtFraction: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
  fencing: fc.boolean(),
  wakeUp: fc.boolean(),
  clock: clockArb,
});

const resourceNameArb = fc.string({ minLength: 1, maxLength: 8 });
const resourcesArb = fc.oneof(
  { weight: 5, arbitrary: resourceNameArb },
  { weight: 5, arbitrary: fc.uniqueArray(resourceNameArb, { minLength: 1, maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('', [], ['a', 'a'], ['a', ''], ['a', 7]) },
  { weight: 1, arbitrary: fc.array(fc.oneof(resourceNameArb, junkArb), { maxLength: 3 }) },
  { weight: 1, arbitrary: junkArb },
);
const ttlArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 60_000 }) },
  { weight: 2, arbitrary: numberArb },
  { weight: 1, arbitrary: junkArb },
);

/** The signal is ours to abort, so no valid-but-endless acquire can run forever. */
interface CallOptions {
  readonly options: unknown;
  readonly escape: AbortController;
}
const SIGNALS = ['ours', 'already aborted'] as const;
const acquireOptionsArb: fc.Arbitrary<CallOptions> = optionsArb({
  acquireTimeoutMs: fc.oneof(fc.nat(5_000), fc.constant(MAX_TTL_MS), fc.constant(Number.POSITIVE_INFINITY)),
  retry: retryArb,
  signal: fc.constantFrom<unknown>(...SIGNALS),
}).map((options) => {
  const escape = new AbortController();
  if (options === undefined) return { options: { signal: escape.signal }, escape };
  const plain = typeof options === 'object' && options !== null && [Object.prototype, null].includes(Object.getPrototypeOf(options));
  if (!plain) return { options, escape };
  const given = (options as { signal?: unknown }).signal;
  // A signal of the junk (one that never aborts) is a valid signal: ours goes with it, or a
  // spoiled options object with a 24-day timeout would wait its 24 days.
  const signal =
    given === 'already aborted'
      ? AbortSignal.abort('early')
      : given === 'ours' || given === undefined
        ? escape.signal
        : given instanceof AbortSignal
          ? AbortSignal.any([given, escape.signal])
          : given;
  return { options: { ...options, signal }, escape };
});

// --- checks -------------------------------------------------------------------------

/** Outcomes seen, so a property cannot pass by rejecting every input. */
const outcomes = new Map<string, number>();
function saw(outcome: string): void {
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}
function expectOutcomes(defaultRuns: number, ...wanted: string[]): void {
  report('outcomes', Object.fromEntries(outcomes));
  if (fullRun(defaultRuns)) {
    for (const outcome of wanted) expect(outcomes.get(outcome) ?? 0, `runs that ended in ${outcome}`).toBeGreaterThan(0);
  }
  outcomes.clear();
}

/** Our typed errors only; anything else fails the property with the culprit. */
function expectTyped(error: unknown, what: string): void {
  if (!isQuorumLockError(error)) throw new Error(`${what} threw a foreign error: ${String(error)}`, { cause: error });
  saw(error.code);
}

/** Collects unhandled rejections while a property runs. */
function watchUnhandled(): { readonly seen: unknown[]; stop(): void } {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason);
  };
  process.on('unhandledRejection', listener);
  return { seen, stop: () => process.off('unhandledRejection', listener) };
}

/** Lets pending rejections surface: a rejection is unhandled once a macrotask passes without a handler. */
const macrotask = () => new Promise((resolve) => setImmediate(resolve));

// --- against a real redis-server ------------------------------------------------------

let nodes: LocalNodeSet;
let clients: Redis[];

beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
});

afterAll(async () => {
  await nodes?.stopAll();
});

afterEach(() => {
  vi.useRealTimers();
});

const CONSTRUCTOR_RUNS = 400;
const CALL_RUNS = 400;
let fuzzKey = 0;

describe('public calls with arbitrary inputs', () => {
  it('constructors build a locker or throw InvalidArgumentError; the locker then answers typed', async () => {
    const clientArb = fc.oneof({ weight: 6, arbitrary: fc.nat(2).map((i) => clients[i] as unknown) }, { weight: 1, arbitrary: junkArb });
    // Mostly what each constructor takes (one client; distinct clients), sometimes the other shape or junk.
    const argumentArb = (redlock: boolean) =>
      fc.oneof(
        { weight: 4, arbitrary: redlock ? fc.uniqueArray(clientArb, { minLength: 1, maxLength: 3 }) : clientArb },
        { weight: 1, arbitrary: redlock ? clientArb : fc.array(clientArb, { maxLength: 3 }) },
        { weight: 1, arbitrary: fc.array(clientArb, { maxLength: 4 }) },
        // A clients array with holes: each hole must be named.
        { weight: 1, arbitrary: fc.constant<unknown>([clients[0], , clients[1]]) },
      );
    const unhandled = watchUnhandled();
    try {
      await checkProperty(
        fc.asyncProperty(
          fc.boolean().chain((redlock) => fc.tuple(fc.constant(redlock), argumentArb(redlock))),
          lockerOptionsArb,
          async ([redlock, clientOrClients], options) => {
            let locker: RedisLock | Redlock;
            try {
              locker = redlock
                ? new Redlock(clientOrClients as Redis[], options as never)
                : new RedisLock(clientOrClients as Redis, options as never);
            } catch (error) {
              expectTyped(error, 'the constructor');
              expect(error).toBeInstanceOf(InvalidArgumentError);
              expect((error as InvalidArgumentError).argument).toMatch(/^(client|clients|options)/);
              return;
            }
            // Built: one attempt on a fresh key answers with a lock, or a typed error.
            const key = `fuzz:${++fuzzKey}`;
            saw('built');
            const lock = await locker.tryAcquire(key, 1_000).catch((error: unknown) => expectTyped(error, 'tryAcquire'));
            if (lock) {
              saw('granted');
              expect((await lock.release()).nodes).toBeGreaterThan(0);
            }
            await macrotask();
            expect(unhandled.seen).toEqual([]);
          },
        ),
        CONSTRUCTOR_RUNS,
      );
      expectOutcomes(CONSTRUCTOR_RUNS, 'built', 'granted', ErrorCode.INVALID_ARGUMENT);
    } finally {
      unhandled.stop();
    }
  }, timeoutFor(CONSTRUCTOR_RUNS, 60_000));

  it('tryAcquire, extend and release on real nodes answer typed, whatever the arguments', async () => {
    const lockers = [new RedisLock(clients[0] as Redis), new Redlock(clients)];
    const unhandled = watchUnhandled();
    try {
      await checkProperty(
        fc.asyncProperty(fc.nat(1), resourcesArb, ttlArb, acquireOptionsArb, ttlArb, async (which, resources, ttl, call, extendTtl) => {
          const locker = lockers[which] as RedisLock | Redlock;
          // Fresh keys per run: nothing another run left can hold them.
          const prefix = `fuzz:${++fuzzKey}:`;
          const keys = typeof resources === 'string' ? prefix + resources : Array.isArray(resources) ? resources.map((r) => (typeof r === 'string' ? prefix + r : r)) : resources;
          let lock: Lock | null = null;
          try {
            lock = await locker.tryAcquire(keys as string, ttl as number, call.options as never);
          } catch (error) {
            expectTyped(error, 'tryAcquire');
          }
          if (lock) {
            saw('granted');
            await lock.extend(extendTtl as number).then(() => saw('extended'), (error: unknown) => expectTyped(error, 'extend'));
            const released = await lock.release();
            expect(released.nodes).toBe(which === 0 ? 1 : 3);
          }
          await macrotask();
          expect(unhandled.seen).toEqual([]);
        }),
        CALL_RUNS,
      );
      expectOutcomes(CALL_RUNS, 'granted', 'extended', ErrorCode.INVALID_ARGUMENT);
    } finally {
      unhandled.stop();
    }
  }, timeoutFor(CALL_RUNS, 60_000));

  it('acquire and using on simulated nodes settle typed (or with the routine\'s own outcome), whatever the arguments', async () => {
    const routineArb = fc.oneof(
      junkArb.map((value) => ({ kind: 'junk' as const, value })),
      junkArb.map((value) => ({ kind: 'returns' as const, value })),
      junkArb.map((value) => ({ kind: 'throws' as const, value })),
      junkArb.map((value) => ({ kind: 'rejects' as const, value })),
    );
    const unhandled = watchUnhandled();
    let run = 0;
    try {
      await checkProperty(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.boolean(),
          resourcesArb,
          ttlArb,
          acquireOptionsArb,
          routineArb,
          async (nodeCount, viaUsing, resources, ttl, call, routine) => {
            vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000, loopLimit: 100_000 });
            try {
              const { locker } = simulatedCluster({
                plans: Array.from({ length: nodeCount }, () => []),
                minReplyMs: 1,
                namePrefix: `fuzz#${++run}:`,
                options: {},
              });
              const thrown = { marker: Symbol('thrown') };
              const body =
                routine.kind === 'junk'
                  ? routine.value
                  : async () => {
                      if (routine.kind === 'throws') throw routine.value;
                      if (routine.kind === 'rejects') return Promise.reject(routine.value);
                      return routine.value;
                    };
              const settled: { value?: unknown; error?: unknown; done: boolean } = { done: false };
              const pending = viaUsing
                ? locker.using(resources as string, ttl as number, body as () => unknown, call.options as never)
                : locker.acquire(resources as string, ttl as number, call.options as never);
              pending.then(
                (value) => Object.assign(settled, { value, done: true }),
                (error: unknown) => Object.assign(settled, { error, done: true }),
              );
              // However long the options allow it to wait: 10 s of fake time (past any finite timeout
              // generated below MAX_TTL_MS), then our signal aborts it.
              for (let i = 0; i < 10 && !settled.done; i++) await vi.advanceTimersByTimeAsync(1_000);
              if (!settled.done) call.escape.abort(thrown);
              for (let i = 0; i < 10 && !settled.done; i++) await vi.advanceTimersByTimeAsync(1_000);
              if (!settled.done) throw new Error('the call never settled, even after its signal aborted');

              if ('error' in settled) {
                const routineFailed =
                  viaUsing && (routine.kind === 'throws' || routine.kind === 'rejects') && Object.is(settled.error, routine.value);
                if (!routineFailed) expectTyped(settled.error, viaUsing ? 'using' : 'acquire');
                if (isQuorumLockError(settled.error) && settled.error.code === ErrorCode.ABORTED) {
                  expect(call.escape.signal.aborted || (call.options as { signal?: AbortSignal })?.signal?.aborted).toBe(true);
                }
                if (routineFailed) saw('routine error passed through');
              } else if (viaUsing) {
                // A junk "routine" that happens to be a function is a routine: its result is its own.
                if (routine.kind === 'returns') expect(Object.is(settled.value, routine.value)).toBe(true);
                saw('routine value returned');
              } else {
                saw('granted');
              }
              // The simulated nodes answer on the fake clock: start the release, then let time run.
              const released = !viaUsing && !('error' in settled) ? (settled.value as Lock).release() : undefined;
              await vi.runAllTimersAsync();
              if (released) expect((await released).nodes).toBe(nodeCount);
            } finally {
              vi.useRealTimers();
            }
            await macrotask();
            expect(unhandled.seen).toEqual([]);
          },
        ),
        CALL_RUNS,
      );
      expectOutcomes(CALL_RUNS, 'granted', 'routine value returned', 'routine error passed through', ErrorCode.INVALID_ARGUMENT);
    } finally {
      unhandled.stop();
    }
  }, timeoutFor(CALL_RUNS, 60_000));
});
