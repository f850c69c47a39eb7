import { getEventListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  type Lock,
  type LockerOptions,
  LockLostError,
  OverlappingHoldError,
} from '../../src/index.js';
import { holderValue } from '../../src/scripts/waiterMark.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { LOCKER_KINDS } from '../support/lockerKinds.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let nodes: LocalNodeSet;
let clients: Redis[];
/** A second connection per node: another process's locker, and the test's own eyes. */
let others: Redis[];

beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
  others = nodes.clients();
});
afterAll(async () => {
  await nodes.stopAll();
});
beforeEach(async () => {
  await nodes.flushAll();
});

/** Commands each node has processed so far (INFO counts itself only after it ran). */
async function commandCounts(redis: readonly Redis[]): Promise<number[]> {
  return Promise.all(
    redis.map(async (client) => Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1] ?? Number.NaN)),
  );
}

describe.each(LOCKER_KINDS)('reentrancy: $name', (kind) => {
  const mine = () => clients.slice(0, kind.nodeCount);
  const theirs = () => others.slice(0, kind.nodeCount);
  const locker = (options?: LockerOptions) => kind.make(mine(), options);
  /** Another process's locker on the same nodes. */
  const elsewhere = (options?: LockerOptions) => kind.make(theirs(), options);
  const valuesOf = async (key: string) => Promise.all(theirs().map(async (c) => holderValue((await c.get(key)) ?? '')));
  const pttlsOf = (key: string) => Promise.all(theirs().map((c) => c.pttl(key)));
  const heldBy = async (key: string, value: string) => (await valuesOf(key)).filter((v) => v === value).length;
  const quorum = Math.floor(kind.nodeCount / 2) + 1;
  // A release resolves once a quorum answered; the slowest node's delete may still be on its way.
  const expectGone = (key: string, value: string) => expect.poll(() => heldBy(key, value), { timeout: 5_000, interval: 10 }).toBe(0);

  it('re-enters nested using() three deep on one key: one value, one token, a hold count, keys kept until the outermost ends', async () => {
    const redlock = locker({ fencing: true });
    const seen: { holds: number; value: string; token: bigint | undefined }[] = [];
    const note = (lock: Lock) => seen.push({ holds: lock.holds, value: lock.value, token: lock.fencingToken });
    let outer: Lock | undefined;
    await redlock.using('orders:42', 10_000, async (_signal, first) => {
      outer = first;
      note(first);
      await redlock.using('orders:42', 10_000, async (_s, second) => {
        note(second);
        await redlock.using('orders:42', 10_000, async (_s3, third) => {
          note(third);
        });
        note(second);
      });
      note(first);
      expect(await heldBy('orders:42', first.value)).toBeGreaterThanOrEqual(quorum);
    });
    const value = outer?.value ?? '';
    expect(seen.map((s) => s.holds)).toEqual([1, 2, 3, 2, 1]);
    expect(new Set(seen.map((s) => s.value))).toEqual(new Set([value]));
    expect(seen[0]?.token).toBeTypeOf('bigint');
    expect(new Set(seen.map((s) => s.token)).size).toBe(1);
    expect(outer?.holds).toBe(0);
    await expectGone('orders:42', value);
  });

  it('re-enters siblings started together inside one routine (Promise.all), acquire and tryAcquire too', async () => {
    const redlock = locker();
    await redlock.using('stock', 10_000, async (_signal, outer) => {
      let peak = 0;
      const sibling = (delayMs: number) =>
        redlock.using('stock', 10_000, async (_s, lock) => {
          await sleep(delayMs);
          peak = Math.max(peak, lock.holds);
          return lock.value;
        });
      const byHand = async () => {
        const lock = await redlock.acquire('stock', 10_000, { acquireTimeoutMs: 0 });
        const maybe = await redlock.tryAcquire('stock', 10_000);
        const values = [lock.value, maybe?.value];
        await maybe?.release();
        await lock.release();
        return values;
      };
      const [a, b, c] = await Promise.all([sibling(30), sibling(10), byHand()]);
      expect([a, b, ...c]).toEqual(Array(4).fill(outer.value));
      expect(peak).toBeGreaterThanOrEqual(3);
      expect(outer.holds).toBe(1);
      expect(outer.signal.aborted).toBe(false);
      expect(await heldBy('stock', outer.value)).toBeGreaterThanOrEqual(quorum);
    });
  });

  it("many re-entries read their signals through one listener on the outer lock's, and its end aborts every one of them", async () => {
    const redlock = locker();
    const outer = await redlock.acquire('fan', 10_000);
    await outer.scope(async () => {
      const inners = await Promise.all(Array.from({ length: 20 }, () => redlock.acquire('fan', 10_000)));
      const signals = inners.map((inner) => inner.signal);
      expect(getEventListeners(outer.signal, 'abort').length).toBeLessThanOrEqual(1);
      // Half give their holds back first: each is forgotten on its own.
      for (const inner of inners.slice(0, 10)) await inner.release();
      expect(signals.slice(10).every((signal) => !signal.aborted)).toBe(true);
      await outer.release();
      expect(signals.every((signal) => signal.aborted)).toBe(true);
      expect(signals.slice(10).map((signal) => (signal.reason as { code?: string }).code)).toEqual(Array(10).fill(ErrorCode.LOCK_RELEASED));
    });
  });

  it('an inner release gives back only its own hold: idempotent, no node asked, its signal aborts, the outer one does not', async () => {
    const redlock = locker();
    const outer = await redlock.acquire('job', 10_000);
    await outer.scope(async () => {
      const inner = await redlock.acquire('job', 10_000);
      const innerSignal = inner.signal;
      expect(outer.holds).toBe(2);
      const first = await inner.release();
      expect({ ...first }).toEqual({ released: 0, nodes: 0, outcomes: [] });
      expect(await inner.release()).toBe(first);
      expect(outer.holds).toBe(1);
      expect(innerSignal.aborted).toBe(true);
      expect(innerSignal.reason).toMatchObject({ code: ErrorCode.LOCK_RELEASED });
      await expect(inner.extend(10_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_RELEASED });
      expect(outer.signal.aborted).toBe(false);
      expect(await heldBy('job', outer.value)).toBeGreaterThanOrEqual(quorum);
      // A hold still open when the outermost one ends ends with it.
      const open = await redlock.tryAcquire('job', 10_000);
      const openSignal = open?.signal;
      await outer.release();
      expect(openSignal?.reason).toMatchObject({ code: ErrorCode.LOCK_RELEASED });
      expect(open?.ended).toBe(true);
      expect(outer.holds).toBe(0);
    });
    await expectGone('job', outer.value);
  });

  it('does not re-enter after the outermost hold ended: a later nested call is an independent holder', async () => {
    const redlock = locker();
    let escaped: (() => Promise<Lock | null>) | undefined;
    let outerValue = '';
    await redlock.using('report', 10_000, async (_signal, lock) => {
      outerValue = lock.value;
      // A function made inside the routine and called after it: it runs in the routine's context.
      escaped = () => redlock.tryAcquire('report', 10_000);
    });
    await expectGone('report', outerValue);
    const other = await elsewhere().acquire('report', 10_000);
    expect(await escaped?.()).toBeNull();
    await other.release();
    const fresh = await escaped?.();
    expect(fresh?.value).not.toBe(outerValue);
    expect(fresh?.holds).toBe(1);
    await fresh?.release();
  });

  it('a detached timer started inside the routine that fires after the release does not re-enter', async () => {
    const redlock = locker();
    let fired: (result: Lock | null | Error) => void = () => undefined;
    const timerResult = new Promise<Lock | null | Error>((resolve) => (fired = resolve));
    // An un-awaited promise started inside the routine, settling after it.
    let promiseResult: Promise<Lock | null> | undefined;
    let outerValue = '';
    let let_go: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (let_go = resolve));
    await redlock.using('nightly', 10_000, async (_signal, lock) => {
      outerValue = lock.value;
      setTimeout(() => {
        redlock.tryAcquire('nightly', 10_000).then(fired, fired);
      }, 150);
      promiseResult = gate.then(() => redlock.tryAcquire('nightly', 10_000));
    });
    // Another holder has it by the time the timer fires: a re-entry would wrongly succeed.
    const other = await elsewhere().acquire('nightly', 10_000);
    expect(await timerResult).toBeNull();
    let_go();
    expect(await promiseResult).toBeNull();
    expect(await heldBy('nightly', other.value)).toBeGreaterThanOrEqual(quorum);
    expect(outerValue).not.toBe(other.value);
    await other.release();
  });

  it('does not re-enter a lock that was lost: the nested call acquires as if nothing were held', async () => {
    const redlock = locker();
    await redlock.using('lost', 10_000, async (signal, outer) => {
      // Its keys vanish behind its back (what an expiry on the nodes does); the next extend finds out.
      await Promise.all(theirs().map((client) => client.del('lost')));
      await expect(outer.extend(10_000)).rejects.toBeInstanceOf(LockLostError);
      expect(signal.aborted).toBe(true);
      const fresh = await redlock.tryAcquire('lost', 10_000);
      expect(fresh?.value).not.toBe(outer.value);
      expect(fresh?.holds).toBe(1);
      await fresh?.release();
    });
  });

  it('refuses overlapping resources with OverlappingHoldError at once, re-enters a subset, acquires disjoint ones independently', async () => {
    const redlock = locker();
    await redlock.using(['a', 'b'], 10_000, async (_signal, outer) => {
      const startedAt = performance.now();
      const error = await redlock.using(['b', 'c'], 10_000, async () => 'never').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OverlappingHoldError);
      expect(error).toMatchObject({ code: ErrorCode.OVERLAPPING_HOLD, resources: ['b', 'c'], heldResources: ['a', 'b'] });
      // Refused, not waited for until the acquire timeout.
      expect(performance.now() - startedAt).toBeLessThan(5_000);
      expect(await valuesOf('c')).toEqual(Array(kind.nodeCount).fill(''));
      await expect(redlock.tryAcquire(['c', 'a'], 10_000)).rejects.toBeInstanceOf(OverlappingHoldError);

      const subset = await redlock.acquire('b', 10_000);
      expect(subset.value).toBe(outer.value);
      expect(subset.resources).toEqual(['a', 'b']);
      await subset.release();

      const disjoint = await redlock.using('c', 10_000, async (_s, lock) => lock);
      expect(disjoint.value).not.toBe(outer.value);
      expect(disjoint.holds).toBe(0);
    });
  });

  it('never re-enters through another locker, even on the same clients', async () => {
    const redlock = locker();
    const sameClients = locker();
    await redlock.using('invoice', 10_000, async () => {
      expect(await sameClients.tryAcquire('invoice', 10_000)).toBeNull();
      await expect(sameClients.acquire('invoice', 10_000, { acquireTimeoutMs: 100 })).rejects.toMatchObject({ code: ErrorCode.LOCK_HELD });
    });
  });

  it('extends the lock when an inner call asks for a longer TTL than it has, or than is left', async () => {
    const redlock = locker();
    await redlock.using('ledger', 2_000, async (_signal, outer) => {
      expect(Math.max(...(await pttlsOf('ledger')))).toBeLessThanOrEqual(2_000);
      await redlock.using('ledger', 20_000, async (_s, inner) => {
        expect(inner.ttlMs).toBe(20_000);
        expect(inner.remainingMs()).toBeGreaterThan(2_000);
        const pttls = await pttlsOf('ledger');
        expect(pttls.filter((pttl) => pttl > 2_000).length).toBeGreaterThanOrEqual(quorum);
      });
      // Kept, not shrunk back: the outer hold's auto-extension extends by the lock's TTL now.
      expect(outer.ttlMs).toBe(20_000);
    });

    const byHand = await redlock.acquire('ledger', 1_000);
    await byHand.scope(async () => {
      await sleep(700);
      const before = byHand.remainingMs();
      expect(before).toBeLessThan(400);
      // Shorter than the lock's TTL, but longer than what is left of it.
      const inner = await redlock.tryAcquire('ledger', 900);
      expect(inner?.value).toBe(byHand.value);
      expect(byHand.remainingMs()).toBeGreaterThan(before + 300);
      expect(byHand.ttlMs).toBe(1_000);
      await inner?.release();
    });
    await byHand.release();
  });

  it('a plain acquire() sets no context: only using() and lock.scope() do', async () => {
    const redlock = locker();
    const lock = await redlock.acquire('plain', 10_000);
    expect(await redlock.tryAcquire('plain', 10_000)).toBeNull();
    const inside = await lock.scope(async (signal, same) => {
      expect(same).toBe(lock);
      expect(signal).toBe(lock.signal);
      return redlock.tryAcquire('plain', 10_000);
    });
    expect(inside?.value).toBe(lock.value);
    await inside?.release();
    await lock.release();
  });

  it('with reentrant: false, a nested call is an independent holder and waits, as before', async () => {
    const redlock = locker({ reentrant: false });
    await redlock.using('legacy', 10_000, async (_signal, outer) => {
      expect(await redlock.tryAcquire('legacy', 10_000)).toBeNull();
      await expect(redlock.acquire('legacy', 10_000, { acquireTimeoutMs: 100 })).rejects.toMatchObject({ code: ErrorCode.LOCK_HELD });
      expect(outer.holds).toBe(1);
    });
  });

  it('makes no Redis command for a nested acquire, tryAcquire, using() or inner release', async () => {
    const redlock = locker();
    const observers = theirs();
    await redlock.using('counted', 30_000, async (_signal, outer) => {
      const before = await commandCounts(observers);
      await redlock.using('counted', 30_000, async () => {
        const lock = await redlock.acquire('counted', 30_000);
        const maybe = await redlock.tryAcquire('counted', 30_000);
        await redlock.using('counted', 10_000, async () => undefined);
        await maybe?.release();
        await lock.release();
      });
      const after = await commandCounts(observers);
      // The only command in between is the first INFO itself.
      expect(after.map((count, i) => count - (before[i] ?? 0))).toEqual(Array(kind.nodeCount).fill(1));

      // The count has teeth: one round trip shows up on every node it reaches.
      const control = await commandCounts(observers);
      await outer.extend(30_000);
      await sleep(50);
      const afterControl = await commandCounts(observers);
      const deltas = afterControl.map((count, i) => count - (control[i] ?? 0));
      expect(deltas.filter((delta) => delta >= 2).length).toBeGreaterThanOrEqual(quorum);
    });
  });

  it('re-enters a lock by its value through another locker, verified on a quorum, and leaves its release to the holder', async () => {
    const owner = locker();
    const lock = await owner.acquire('shared', 10_000);
    const child = elsewhere();
    const borrowed = await child.reenter('shared', lock.value);
    expect(borrowed.value).toBe(lock.value);
    expect(borrowed.remainingMs()).toBeGreaterThan(0);
    expect(borrowed.remainingMs()).toBeLessThanOrEqual(10_000);
    // Its own nested calls re-enter it.
    const nested = await borrowed.scope(() => child.using('shared', 5_000, async (_s, inner) => inner.value));
    expect(nested).toBe(lock.value);
    expect({ ...(await borrowed.release()) }).toEqual({ released: 0, nodes: 0, outcomes: [] });
    expect(await heldBy('shared', lock.value)).toBeGreaterThanOrEqual(quorum);

    await expect(child.reenter('shared', 'f'.repeat(32))).rejects.toBeInstanceOf(LockLostError);
    await lock.release();
    const lost = await child.reenter('shared', lock.value).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(LockLostError);
    expect(lost).toMatchObject({ code: ErrorCode.LOCK_LOST, resources: ['shared'] });
    await expect(child.reenter('shared', '')).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT, argument: 'value' });
  });
});
