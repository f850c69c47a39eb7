/**
 * Negative controls: each breaks one of Redlock's stated assumptions on
 * purpose, in an orchestrated way, so that two holders really overlap. The
 * checker must report the overlap; a control passes only if it does, which
 * proves the checker has teeth. With fencing on, the tokens must still
 * increase from A to B (design.md: a node restarted empty cannot send them
 * backwards) - which is what fencing is for.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, isQuorumLockError, type Lock, type Locker } from '../../src/index.js';
import { sharedNow } from './history/timeBase.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { formatOverlap } from './check/report.js';
import { chaosFile } from './run/chaosFile.js';
import { type ControlContext, type ControlSpec, runControl } from './run/control.js';
import { waitReady } from './run/scenario.js';
import { sleep } from './run/sleep.js';

const file = chaosFile(import.meta.filename);
const MAJORITY = [0, 1, 2];
/**
 * Nodes get a second to answer and acquires ten to succeed: what the controls
 * break is not timing, and with the safe scenarios' 80 ms a loaded machine
 * once timed out every attempt of a control's acquire.
 */
const CONTROL_LOCKER = Object.freeze({ fencing: true, nodeTimeoutMs: 1_000, acquireTimeoutMs: 10_000 });

/**
 * Once A's keys are proven gone from a majority while A's validity is left,
 * B acquires: both believe they hold the lock for a while, and the overlap
 * is B's whole hold, not a sliver.
 */
async function lockBWhileAHolds(ctx: ControlContext, lockA: Lock, ttlMs: number): Promise<void> {
  const [, b] = ctx.lockers;
  if (b === undefined) throw new Error('a control needs lockers A and B');
  await ctx.untilGoneFrom(MAJORITY, 5_000);
  if (lockA.remainingMs() <= 0) throw new Error("A's validity ran out before its keys were gone from a majority: nothing to overlap");
  const lockB = await b.acquire(ctx.resource, ttlMs, { acquireTimeoutMs: 8_000 });
  ctx.note(`B acquired ${ctx.resource} with ${lockA.remainingMs().toFixed(0)} ms of A's validity left`);
  await sleep(100);
  await lockB.release();
  await lockA.release();
}

/** Waits until `key` exists on the node `admin` talks to. */
async function untilPresent(admin: { exists(key: string): Promise<number> }, key: string, withinMs: number): Promise<void> {
  const started = performance.now();
  while ((await admin.exists(key)) === 0) {
    if (performance.now() - started > withinMs) throw new Error(`${key} never reached the node within ${withinMs} ms`);
    await sleep(5);
  }
}

/** reenter() makes one round: one whose nodes did not answer in time (a loaded machine) is asked again. */
async function reenterDespiteSlowNodes(locker: Locker, resource: string, value: string): Promise<Lock> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await locker.reenter(resource, value);
    } catch (error) {
      if (attempt >= 20 || !isQuorumLockError(error, ErrorCode.QUORUM_UNREACHABLE)) throw error;
      await sleep(20);
    }
  }
}

async function expectCaught(spec: ControlSpec, steps: (ctx: ControlContext) => Promise<void>): Promise<void> {
  const outcome = await runControl(file.cluster(), spec, steps);
  file.report.add(outcome.summary);
  const path = file.report.saveHistory(spec.name, outcome.history);
  expect(outcome.summary.unexpectedErrors).toEqual([]);
  console.log(`[chaos] ${spec.name}: violation constructed\n  ${outcome.construction.join('\n  ')}`);
  expect(outcome.check.overlaps.length, `the checker missed the overlap (history: ${path})`).toBeGreaterThan(0);
  console.log(`[chaos] ${spec.name}: caught as expected\n${formatOverlap(outcome.check.overlaps[0]!, outcome.history)}`);
  expect(outcome.check.tokenRegressions).toEqual([]);
  expect(outcome.summary.passed).toBe(true);
}

describe('chaos negative controls: the checker catches what breaks Redlock', () => {
  it('reports an overlap when a majority of nodes restarts empty while the holder still holds', () =>
    expectCaught({ name: 'neg-restart-empty-majority', rules: [2, 3], locker: CONTROL_LOCKER }, async (ctx) => {
      const { cluster, faults, lockers: [a] } = ctx;
      const lockA = await a!.acquire(ctx.resource, 10_000);
      // A's client would resend a request left unanswered (an attempt of A's that timed out on a
      // loaded machine) to a node once it is back, and put A's key there again: once B found it
      // held on 3 nodes. Cut off, A's links to the restarted nodes carry nothing more.
      for (const i of MAJORITY) ctx.links[0]?.proxies[i]?.cutOff();
      // Immediately, without persistence: breaks "stay down longer than the max TTL".
      await Promise.all(
        MAJORITY.map((i) => faults.during('restart-empty (immediate)', cluster.nodeName(i), () => cluster.set.node(i).restart({ empty: true }))),
      );
      ctx.note(`A holds; A's links to ${MAJORITY.map((i) => cluster.nodeName(i)).join(', ')} cut off, and they restarted empty at once`);
      await lockBWhileAHolds(ctx, lockA, 10_000);
    }));

  it('reports an overlap when a majority of node clocks runs 3x fast, far beyond the drift factor', () =>
    expectCaught({ name: 'neg-clock-3x-majority', rules: [2], locker: CONTROL_LOCKER }, async (ctx) => {
      const { cluster, faults, lockers: [a] } = ctx;
      const admins = MAJORITY.map((i) => cluster.admin(i));
      await waitReady(admins);
      const lockA = await a!.acquire(ctx.resource, 6_000);
      const nemeses = admins.map((admin) => new SkewNemesis(admin, { rate: 3, match: ctx.resource }));
      const ends = MAJORITY.map((i) => faults.begin('clock x3', cluster.nodeName(i)));
      for (const nemesis of nemeses) nemesis.start();
      ctx.note(`A holds for 6 s; the clocks of ${MAJORITY.map((i) => cluster.nodeName(i)).join(', ')} run 3x fast`);
      try {
        // A's keys vanish from the majority after about a third of the TTL, with two thirds of A's validity left.
        await lockBWhileAHolds(ctx, lockA, 6_000);
      } finally {
        await Promise.all(nemeses.map((n) => n.stop()));
        for (const end of ends) end();
      }
    }));

  it('reports an overlap when a majority of node clocks jumps forward by the TTL', () =>
    expectCaught({ name: 'neg-clock-jump-majority', rules: [2], locker: CONTROL_LOCKER }, async (ctx) => {
      const { cluster, faults, lockers: [a] } = ctx;
      const admins = MAJORITY.map((i) => cluster.admin(i));
      await waitReady(admins);
      const lockA = await a!.acquire(ctx.resource, 10_000);
      // A quorum granted A: a majority node's write may still be on its way. It must be there
      // before the jump, or it lands after it with a whole TTL (a CI check: still on n1 after 5 s).
      await Promise.all(admins.map((admin) => untilPresent(admin, ctx.resource, 5_000)));
      await Promise.all(
        admins.map(async (admin, i) => {
          faults.instant('clock jump', cluster.nodeName(i), '+10000 ms');
          await new SkewNemesis(admin, { rate: 1, match: ctx.resource }).jump(10_000);
        }),
      );
      ctx.note(`A holds for 10 s; the clocks of ${MAJORITY.map((i) => cluster.nodeName(i)).join(', ')} jumped 10 s forward`);
      await lockBWhileAHolds(ctx, lockA, 10_000);
    }));

  it("reports an overlap when a lock's owner releases it while another process still holds it by value", () =>
    expectCaught({ name: 'neg-reentry-outlives-owner', rules: [6], lockers: 3, locker: CONTROL_LOCKER }, async (ctx) => {
      const [a, b, p] = ctx.lockers as readonly Locker[] as [Locker, Locker, Locker];
      const lockA = await a.acquire(ctx.resource, 10_000);
      const reentered = await reenterDespiteSlowNodes(p, ctx.resource, lockA.value);
      const from = sharedNow();
      ctx.note(`A holds ${ctx.resource}; C re-entered it by A's value`);
      await lockA.release();
      ctx.note("A released it while C's re-entered hold is still open: the keys are gone, C does not know");
      const lockB = await b.acquire(ctx.resource, 10_000, { acquireTimeoutMs: 8_000 });
      ctx.note(`B acquired it with ${reentered.remainingMs().toFixed(0)} ms of C's re-entered validity left`);
      await sleep(100);
      ctx.reentries.reentry({ client: 'C', value: reentered.value, resources: [...reentered.resources], byValue: true, from, to: sharedNow() });
      await reentered.release();
      await lockB.release();
    }));
});
