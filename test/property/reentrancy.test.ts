/**
 * Model-based test of reentrancy on RedisLock (1 node) and Redlock (3 nodes)
 * against real redis-server processes: any interleaving of nested acquires
 * (from the outer lock's scope or from an inner handle's, one at a time or as
 * siblings), nested using() calls, inner releases, and the outer release keeps
 * the hold count, every handle's signal and the keys on the nodes as a model
 * says. After the outer release, a nested call must not re-enter: it is an
 * independent holder with a value of its own.
 */
import type { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lock, RedisLock, Redlock } from '../../src/index.js';
import { holderValue } from '../../src/scripts/waiterMark.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { LOCKER_KINDS } from '../support/lockerKinds.js';
import { checkProperty, commandsConstraints, fullRun, report, timeoutFor } from './fcConfig.js';

const KEY = 'reentered';
const TTL_MS = 60_000;
const RUNS = 60;

interface Model {
  outerOpen: boolean;
  /** Per inner handle, in the order they were made: whether its hold is still open. */
  readonly inner: boolean[];
}

interface Real {
  readonly locker: RedisLock | Redlock;
  readonly nodes: readonly Redis[];
  readonly quorum: number;
  readonly outer: Lock;
  readonly inner: Lock[];
}

type Command = fc.AsyncCommand<Model, Real, false>;

const ran = new Map<string, number>();
const count = (what: string): void => {
  ran.set(what, (ran.get(what) ?? 0) + 1);
};

function expectedHolds(model: Model): number {
  return model.outerOpen ? 1 + model.inner.filter(Boolean).length : 0;
}

/** Where a nested call starts from: the outer lock's scope, or an inner handle's. */
function scopeOf(real: Real, from: number | undefined): Lock {
  return from === undefined || real.inner.length === 0 ? real.outer : (real.inner[from % real.inner.length] as Lock);
}

async function check(model: Model, real: Real, after: string): Promise<void> {
  const holds = expectedHolds(model);
  expect(real.outer.holds, `outer holds after ${after}`).toBe(holds);
  expect(real.outer.signal.aborted, `outer signal after ${after}`).toBe(!model.outerOpen);
  real.inner.forEach((lock, i) => {
    expect(lock.holds, `inner ${i} holds after ${after}`).toBe(holds);
    expect(lock.signal.aborted, `inner ${i} signal after ${after}`).toBe(!(model.outerOpen && model.inner[i]));
  });
  const values = await Promise.all(real.nodes.map(async (node) => holderValue((await node.get(KEY)) ?? '')));
  if (model.outerOpen) {
    expect(values.filter((v) => v === real.outer.value).length, `${KEY} on a quorum after ${after}: ${values}`).toBeGreaterThanOrEqual(real.quorum);
    expect(values.every((v) => v === real.outer.value || v === ''), `only the outer value after ${after}: ${values}`).toBe(true);
  } else {
    expect(values, `no key after ${after}`).toEqual(Array(real.nodes.length).fill(''));
  }
}

/**
 * One nested call: after the outer release it must be an independent lock
 * (released again at once); before, a further hold with the outer value.
 */
async function nested(model: Model, real: Real, lock: Lock | null, what: string): Promise<void> {
  expect(lock, what).not.toBeNull();
  const got = lock as Lock;
  if (model.outerOpen) {
    expect(got, what).not.toBe(real.outer);
    expect(got.value, what).toBe(real.outer.value);
    real.inner.push(got);
    model.inner.push(true);
  } else {
    expect(got.value, `${what} after the outer release`).not.toBe(real.outer.value);
    expect(got.holds, `${what} after the outer release`).toBe(1);
    await (await got.release()).settled;
  }
}

class Enter implements Command {
  constructor(readonly via: 'acquire' | 'tryAcquire', readonly from: number | undefined) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count(`Enter.${this.via}`);
    const lock = await scopeOf(r, this.from).scope(() =>
      this.via === 'acquire' ? r.locker.acquire(KEY, TTL_MS, { acquireTimeoutMs: 0 }) : r.locker.tryAcquire(KEY, TTL_MS),
    );
    await nested(m, r, lock, this.toString());
    await check(m, r, this.toString());
  }
  toString = () => `${this.via}(from ${this.from ?? 'outer'})`;
}

class Siblings implements Command {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count('Siblings');
    const locks = await r.outer.scope(() => Promise.all(Array.from({ length: this.n }, () => r.locker.tryAcquire(KEY, TTL_MS))));
    // After the outer release they are independent holders racing for the key: one wins.
    const expected = m.outerOpen ? locks : locks.filter((lock) => lock !== null);
    if (!m.outerOpen) expect(expected, `${this} after the outer release`).toHaveLength(1);
    for (const lock of expected) await nested(m, r, lock, this.toString());
    await check(m, r, this.toString());
  }
  toString = () => `siblings(${this.n})`;
}

class UsingInside implements Command {
  constructor(readonly from: number | undefined) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count('UsingInside');
    const inside = await scopeOf(r, this.from).scope(() =>
      r.locker.using(KEY, TTL_MS, async (_signal, lock) => ({ value: lock.value, holds: lock.holds })),
    );
    if (m.outerOpen) expect(inside, this.toString()).toEqual({ value: r.outer.value, holds: expectedHolds(m) + 1 });
    else expect(inside, this.toString()).toMatchObject({ holds: 1 });
    if (!m.outerOpen) expect(inside.value, this.toString()).not.toBe(r.outer.value);
    await check(m, r, this.toString());
  }
  toString = () => `using(from ${this.from ?? 'outer'})`;
}

class ReleaseInner implements Command {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.inner.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    count('ReleaseInner');
    const i = this.index % r.inner.length;
    const result = await (r.inner[i] as Lock).release();
    expect({ ...result }, this.toString()).toEqual({ released: 0, nodes: 0, outcomes: [] });
    m.inner[i] = false;
    await check(m, r, this.toString());
  }
  toString = () => `releaseInner(${this.index})`;
}

class ReleaseOuter implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count('ReleaseOuter');
    const result = await r.outer.release();
    await result.settled;
    m.outerOpen = false;
    m.inner.fill(false);
    await check(m, r, this.toString());
  }
  toString = () => 'releaseOuter';
}

const fromArb = fc.option(fc.nat(20), { nil: undefined });
// The outer release ends a run's interesting part: it comes up less often.
const commandsArb = fc.commands(
  [
    fc.oneof(
      { weight: 3, arbitrary: fc.tuple(fc.constantFrom('acquire' as const, 'tryAcquire' as const), fromArb).map(([via, from]) => new Enter(via, from)) },
      { weight: 2, arbitrary: fc.integer({ min: 2, max: 4 }).map((n): Command => new Siblings(n)) },
      { weight: 2, arbitrary: fromArb.map((from): Command => new UsingInside(from)) },
      { weight: 3, arbitrary: fc.nat(20).map((i): Command => new ReleaseInner(i)) },
      { weight: 1, arbitrary: fc.constant<Command>(new ReleaseOuter()) },
    ),
  ],
  commandsConstraints({ maxCommands: 25, size: '+1' }),
);

let cluster: LocalNodeSet;
let admin: Redis[];
let lockerClients: Redis[];

beforeAll(async () => {
  cluster = await startNodes(3);
  admin = cluster.clients();
  lockerClients = cluster.clients();
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('reentrancy against real redis-server nodes (model-based)', () => {
  for (const kind of LOCKER_KINDS) {
    it(`${kind.name}: any interleaving of nested acquires and releases keeps the hold count and the keys as the model says`, async () => {
      const nodes = admin.slice(0, kind.nodeCount);
      const locker = kind.make(lockerClients.slice(0, kind.nodeCount));
      await checkProperty(
        fc.asyncProperty(commandsArb, async (commands) => {
          await Promise.all(admin.map((node) => node.flushall()));
          const outer = await locker.acquire(KEY, TTL_MS);
          const model: Model = { outerOpen: true, inner: [] };
          const real: Real = { locker, nodes, quorum: Math.floor(kind.nodeCount / 2) + 1, outer, inner: [] };
          try {
            await fc.asyncModelRun(() => ({ model, real }), commands);
          } finally {
            await (await outer.release()).settled;
          }
        }),
        RUNS,
      );
      report(kind.name, Object.fromEntries(ran));
      for (const name of ['Enter.acquire', 'Enter.tryAcquire', 'Siblings', 'UsingInside', 'ReleaseInner', 'ReleaseOuter']) {
        if (fullRun(RUNS)) expect(ran.get(name) ?? 0, `${name} steps`).toBeGreaterThan(0);
      }
      ran.clear();
    }, timeoutFor(RUNS, 60_000));
  }
});
