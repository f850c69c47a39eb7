/**
 * Model-based tests of RedisLock (1 node) and Redlock (3 nodes) against real
 * redis-server processes: several owners, each with its own connections,
 * acquire, tryAcquire, extend, release and use locks, race each other for
 * them, and have their keys expire behind their backs; a model says who holds
 * what, and after every step the nodes must show exactly that.
 *
 * TTLs are long, so nothing expires by itself during a run: expiry is played
 * by deleting an owner's keys (what the node does when the TTL runs out),
 * which keeps runs fast and their outcome independent of machine speed.
 */
import type { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, isQuorumLockError, type Lock, type RedisLock, type Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { LOCKER_KINDS } from '../support/lockerKinds.js';
import { checkProperty, commandsConstraints, fullRun, report, timeoutFor } from './fcConfig.js';
import { holderValue } from '../../src/scripts/waiterMark.js';

const OWNERS = 3;
const RESOURCES = ['r1', 'r2', 'r3'] as const;
const RESOURCE_SETS: readonly (readonly string[])[] = [['r1'], ['r2'], ['r3'], ['r1', 'r2'], ['r2', 'r3']];
const RUNS = 100;

interface OwnerState {
  lock: Lock | undefined;
  /** Its keys were deleted behind its back (expired): the owner still has the handle, not the lock. */
  stale: boolean;
}

interface Model {
  /** Resource -> owner holding it. */
  readonly holders: Map<string, number>;
  readonly owners: OwnerState[];
}

interface Real {
  readonly lockers: readonly (RedisLock | Redlock)[];
  /** One client per node, for looking at the keys. */
  readonly nodes: readonly Redis[];
  readonly quorum: number;
}

type Command = fc.AsyncCommand<Model, Real, false>;

/** How often each kind of step ran, so a property cannot pass by running nothing. */
const ran = new Map<string, number>();
const count = (what: string): void => {
  ran.set(what, (ran.get(what) ?? 0) + 1);
};

const ttlArb = fc.integer({ min: 30_000, max: 120_000 });
const ownerArb = fc.nat(OWNERS - 1);
const resourcesArb = fc.constantFrom(...RESOURCE_SETS);

function isFree(model: Model, resources: readonly string[]): boolean {
  return resources.every((r) => !model.holders.has(r));
}

function take(model: Model, owner: number, lock: Lock): void {
  model.owners[owner] = { lock, stale: false };
  for (const r of lock.resources) model.holders.set(r, owner);
}

function drop(model: Model, owner: number): void {
  const state = model.owners[owner] as OwnerState;
  if (state.lock && !state.stale) for (const r of state.lock.resources) model.holders.delete(r);
  model.owners[owner] = { lock: undefined, stale: false };
}

/**
 * Every node shows what the model says: each held resource has its holder's value on a
 * quorum and nothing else anywhere. A release resolves once a quorum has deleted, so the
 * slowest node may still be on its way: the nodes get a moment to settle.
 */
async function checkNodes(model: Model, real: Real, after: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const problem = await nodeMismatch(model, real);
    if (problem === undefined) return;
    if (attempt >= 400) expect.fail(`after ${after}: ${problem}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The holder's value at `key` on a node (a waiter's mark taken off), or null. */
async function holderOn(node: Redis, key: string): Promise<string | null> {
  const stored = await node.get(key);
  return stored === null ? null : holderValue(stored);
}

async function nodeMismatch(model: Model, real: Real): Promise<string | undefined> {
  for (const resource of RESOURCES) {
    const values = await Promise.all(real.nodes.map((node) => holderOn(node, resource)));
    const holder = model.holders.get(resource);
    const expected = holder === undefined ? undefined : model.owners[holder]?.lock?.value;
    const where = `${resource} on the nodes: ${JSON.stringify(values)}, expected ${expected ?? 'nothing'}`;
    if (expected === undefined) {
      if (!values.every((v) => v === null)) return where;
    } else {
      if (values.filter((v) => v === expected).length < real.quorum) return `${where} on a quorum`;
      if (!values.every((v) => v === expected || v === null)) return where;
      const ttls = await Promise.all(real.nodes.map((node) => node.pttl(resource)));
      if (ttls.some((ttl, i) => values[i] !== null && ttl <= 0)) return `${where}, PTTLs ${ttls}`;
    }
  }
  return undefined;
}

class TryAcquire implements Command {
  constructor(readonly owner: number, readonly resources: readonly string[], readonly ttlMs: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock === undefined;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const lock = await r.lockers[this.owner]?.tryAcquire(this.resources, this.ttlMs);
    if (isFree(m, this.resources)) {
      expect(lock, `${this} on free resources`).not.toBeNull();
      take(m, this.owner, lock as Lock);
    } else {
      expect(lock, `${this} on held resources`).toBeNull();
    }
    await checkNodes(m, r, this.toString());
  }
  toString = () => `tryAcquire(owner ${this.owner}, [${this.resources}])`;
}

class Acquire implements Command {
  constructor(readonly owner: number, readonly resources: readonly string[], readonly ttlMs: number, readonly waitMs: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock === undefined;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const outcome = await r.lockers[this.owner]
      ?.acquire(this.resources, this.ttlMs, { acquireTimeoutMs: this.waitMs })
      .then((lock) => ({ lock }), (error: unknown) => ({ error }));
    if (isFree(m, this.resources)) {
      expect(outcome, `${this} on free resources`).toHaveProperty('lock');
      take(m, this.owner, (outcome as { lock: Lock }).lock);
    } else {
      expect((outcome as { error?: { code?: string } }).error?.code, `${this} on held resources`).toBe(ErrorCode.LOCK_HELD);
    }
    await checkNodes(m, r, this.toString());
  }
  toString = () => `acquire(owner ${this.owner}, [${this.resources}], wait ${this.waitMs})`;
}

class Extend implements Command {
  constructor(readonly owner: number, readonly ttlMs: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const { lock, stale } = m.owners[this.owner] as OwnerState & { lock: Lock };
    const outcome = await lock.extend(this.ttlMs).then(() => undefined, (error: unknown) => error);
    if (stale) {
      // A quorum says the value is gone: lost, and the handle knows it.
      expect((outcome as { code?: string })?.code, `${this} of an expired lock`).toBe(ErrorCode.LOCK_LOST);
      expect(lock.ended).toBe(true);
      drop(m, this.owner);
    } else {
      expect(outcome, `${this} of a held lock`).toBeUndefined();
      // The extend resolved at a quorum: that many nodes have the new TTL already (a slower one may not yet).
      const key = lock.resources[0] as string;
      const ttls = await Promise.all(r.nodes.map(async (node) => ((await holderOn(node, key)) === lock.value ? node.pttl(key) : -2)));
      expect(ttls.filter((ttl) => ttl > 0 && ttl <= this.ttlMs).length, `${this}: PTTLs ${ttls}`).toBeGreaterThanOrEqual(r.quorum);
    }
    await checkNodes(m, r, this.toString());
  }
  toString = () => `extend(owner ${this.owner}, ${this.ttlMs})`;
}

class Release implements Command {
  constructor(readonly owner: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const { lock, stale } = m.owners[this.owner] as OwnerState & { lock: Lock };
    const first = await lock.release();
    // An expired lock releases nothing (another holder's keys are never touched), and that is no error.
    // A held one is deleted wherever it landed: at least a quorum (a node a racer held took none).
    if (stale) expect(first.released, `${this} of an expired lock`).toBe(0);
    else expect(first.released, `${this}`).toBeGreaterThanOrEqual(r.quorum);
    expect(first.nodes).toBe(r.nodes.length);
    expect(await lock.release(), 'release is idempotent').toBe(first);
    const settled = await first.settled;
    expect(settled.released, `${this}: deleted on every node it landed on`).toBeGreaterThanOrEqual(first.released);
    drop(m, this.owner);
    await checkNodes(m, r, this.toString());
  }
  toString = () => `release(owner ${this.owner})`;
}

/** The owner's keys run out of TTL: what a node does then is delete them. */
class Expire implements Command {
  constructor(readonly owner: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock !== undefined && !m.owners[this.owner]?.stale;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const { lock } = m.owners[this.owner] as OwnerState & { lock: Lock };
    for (const node of r.nodes) {
      for (const resource of lock.resources) if ((await holderOn(node, resource)) === lock.value) await node.del(resource);
    }
    for (const resource of lock.resources) m.holders.delete(resource);
    m.owners[this.owner] = { lock, stale: true };
    await checkNodes(m, r, this.toString());
  }
  toString = () => `expire(owner ${this.owner})`;
}

/** using(): inside the routine the lock is on the nodes and another owner cannot get it. */
class Using implements Command {
  constructor(readonly owner: number, readonly resources: readonly string[], readonly ttlMs: number, readonly rival: number) {}
  check = (m: Readonly<Model>) => m.owners[this.owner]?.lock === undefined;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const free = isFree(m, this.resources);
    const outcome = await r.lockers[this.owner]
      ?.using(this.resources, this.ttlMs, async (signal, lock) => {
        expect(signal.aborted).toBe(false);
        for (const resource of this.resources) {
          const values = await Promise.all(r.nodes.map((node) => holderOn(node, resource)));
          expect(values.filter((v) => v === lock.value).length).toBeGreaterThanOrEqual(r.quorum);
        }
        if (this.rival !== this.owner && m.owners[this.rival]?.lock === undefined) {
          expect(await r.lockers[this.rival]?.tryAcquire(this.resources, this.ttlMs), 'a rival inside using()').toBeNull();
        }
        return 'done';
      }, { acquireTimeoutMs: 0 })
      .then((value) => ({ value }), (error: unknown) => ({ error }));
    if (free) expect(outcome, `${this} on free resources`).toEqual({ value: 'done' });
    else expect((outcome as { error?: { code?: string } }).error?.code, `${this} on held resources`).toBe(ErrorCode.LOCK_HELD);
    await checkNodes(m, r, this.toString());
  }
  toString = () => `using(owner ${this.owner}, [${this.resources}], rival ${this.rival})`;
}

/** Owners without a lock try for the same resources at once: at most one wins, losers leave no key behind. */
class Race implements Command {
  constructor(readonly resources: readonly string[], readonly ttlMs: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const racers = m.owners.flatMap((state, i) => (state.lock === undefined ? [i] : []));
    if (racers.length === 0) return;
    const locks = await Promise.all(racers.map((i) => r.lockers[i]?.tryAcquire(this.resources, this.ttlMs)));
    const winners = racers.filter((_, k) => locks[k] !== null);
    if (!isFree(m, this.resources)) {
      expect(winners, `${this} on held resources`).toEqual([]);
    } else {
      expect(winners.length, `${this}: winners ${winners}`).toBeLessThanOrEqual(1);
      // One node cannot split its vote: a single-node race always has a winner.
      if (r.nodes.length === 1) expect(winners.length, `${this}: winners ${winners}`).toBe(1);
      const winner = winners[0];
      if (winner !== undefined) take(m, winner, locks[racers.indexOf(winner)] as Lock);
    }
    await checkNodes(m, r, this.toString());
  }
  toString = () => `race([${this.resources}])`;
}

/** Owners without a lock run using() on the same resources at once, waiting their turn: never two inside. */
class UsingRace implements Command {
  constructor(readonly resources: readonly string[], readonly holdMs: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    count(this.constructor.name);
    const racers = m.owners.flatMap((state, i) => (state.lock === undefined ? [i] : []));
    if (racers.length === 0 || !isFree(m, this.resources)) return;
    let inside = 0;
    let most = 0;
    const results = await Promise.allSettled(
      racers.map((i) =>
        r.lockers[i]?.using(this.resources, 30_000, async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, this.holdMs));
          inside--;
          return i;
        }, { acquireTimeoutMs: 10_000 }),
      ),
    );
    expect(most, `${this}: owners inside at once`).toBe(1);
    expect(results.map((x) => x.status), `${this}: every owner had its turn`).toEqual(racers.map(() => 'fulfilled'));
    await checkNodes(m, r, this.toString());
  }
  toString = () => `usingRace([${this.resources}], hold ${this.holdMs})`;
}

const commandsArb = fc.commands(
  [
    fc.tuple(ownerArb, resourcesArb, ttlArb).map(([o, res, t]) => new TryAcquire(o, res, t)),
    fc.tuple(ownerArb, resourcesArb, ttlArb, fc.constantFrom(0, 30)).map(([o, res, t, w]) => new Acquire(o, res, t, w)),
    fc.tuple(ownerArb, ttlArb).map(([o, t]) => new Extend(o, t)),
    ownerArb.map((o) => new Release(o)),
    ownerArb.map((o) => new Expire(o)),
    fc.tuple(ownerArb, resourcesArb, ttlArb, ownerArb).map(([o, res, t, rival]) => new Using(o, res, t, rival)),
    fc.tuple(resourcesArb, ttlArb).map(([res, t]) => new Race(res, t)),
    fc.tuple(resourcesArb, fc.nat(5)).map(([res, hold]) => new UsingRace(res, hold)),
  ],
  commandsConstraints({ maxCommands: 30, size: '+1' }),
);

let cluster: LocalNodeSet;
let admin: Redis[];
/** Per owner, its own connection to every node. */
let ownerClients: Redis[][];

beforeAll(async () => {
  cluster = await startNodes(3);
  admin = cluster.clients();
  ownerClients = Array.from({ length: OWNERS }, () => cluster.clients());
});

afterAll(async () => {
  await cluster?.stopAll();
});

describe('RedisLock and Redlock against real redis-server nodes (model-based)', () => {
  for (const kind of LOCKER_KINDS) {
    it(`${kind.name}: owners' interleaved calls leave the nodes as the model says`, async () => {
      const nodes = admin.slice(0, kind.nodeCount);
      const lockers = ownerClients.map((clients) => kind.make(clients.slice(0, kind.nodeCount)));
      await checkProperty(
        fc.asyncProperty(commandsArb, async (commands) => {
          await Promise.all(admin.map((node) => node.flushall()));
          const model: Model = { holders: new Map(), owners: Array.from({ length: OWNERS }, () => ({ lock: undefined, stale: false })) };
          const real: Real = { lockers, nodes, quorum: Math.floor(kind.nodeCount / 2) + 1 };
          try {
            await fc.asyncModelRun(() => ({ model, real }), commands);
          } catch (error) {
            // Our calls may reject only with our typed errors; anything else is reported as it is.
            if (error instanceof Error && !isQuorumLockError(error)) throw error;
            throw new Error(`a call rejected with ${String(error)}`, { cause: error });
          } finally {
            await Promise.all(model.owners.map((state) => state.lock?.release()));
          }
        }),
        RUNS,
      );
      report(kind.name, Object.fromEntries(ran));
      for (const name of ['TryAcquire', 'Acquire', 'Extend', 'Release', 'Expire', 'Using', 'Race', 'UsingRace']) {
        if (fullRun(RUNS)) expect(ran.get(name) ?? 0, `${name} steps`).toBeGreaterThan(0);
      }
      ran.clear();
    }, timeoutFor(RUNS, 60_000));
  }
});
