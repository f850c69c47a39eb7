/**
 * Negative controls: each breaks one of Redlock's stated assumptions on
 * purpose, in an orchestrated way, so that two holders really overlap. The
 * checker must report the overlap; a control passes only if it does, which
 * proves the checker has teeth. With fencing on, the tokens must still
 * increase from A to B (design.md: a node restarted empty cannot send them
 * backwards) - which is what fencing is for.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../../src/index.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { formatOverlap } from './check/report.js';
import { chaosFile } from './run/chaosFile.js';
import { type ControlContext, type ControlSpec, runControl } from './run/control.js';
import { waitReady } from './run/scenario.js';
import { sleep } from './run/sleep.js';

const file = chaosFile(import.meta.filename);
const MAJORITY = [0, 1, 2];

/** Both believe they hold the lock for a while: the overlap is B's whole hold, not a sliver. */
async function holdBothThenRelease(a: Lock, b: Lock): Promise<void> {
  await sleep(100);
  await b.release();
  await a.release();
}

async function expectCaught(spec: ControlSpec, steps: (ctx: ControlContext) => Promise<void>): Promise<void> {
  const outcome = await runControl(file.cluster(), spec, steps);
  file.report.add(outcome.summary);
  const path = file.report.saveHistory(spec.name, outcome.history);
  expect(outcome.summary.unexpectedErrors).toEqual([]);
  expect(outcome.check.overlaps.length, `the checker missed the overlap (history: ${path})`).toBeGreaterThan(0);
  console.log(`[chaos] ${spec.name}: caught as expected\n${formatOverlap(outcome.check.overlaps[0]!, outcome.history)}`);
  expect(outcome.check.tokenRegressions).toEqual([]);
  expect(outcome.summary.passed).toBe(true);
}

describe('chaos negative controls: the checker catches what breaks Redlock', () => {
  it('reports an overlap when a majority of nodes restarts empty while the holder still holds', () =>
    expectCaught({ name: 'neg-restart-empty-majority', rules: [2, 3], locker: { fencing: true } }, async ({ cluster, faults, lockers, resource }) => {
      const [a, b] = lockers as [NonNullable<(typeof lockers)[0]>, NonNullable<(typeof lockers)[0]>];
      const lockA = await a.acquire(resource, 10_000);
      // Immediately, without persistence: breaks "stay down longer than the max TTL".
      await Promise.all(
        MAJORITY.map((i) => faults.during('restart-empty (immediate)', cluster.nodeName(i), () => cluster.set.node(i).restart({ empty: true }))),
      );
      const lockB = await b.acquire(resource, 10_000, { acquireTimeoutMs: 8_000 });
      await holdBothThenRelease(lockA, lockB);
    }));

  it('reports an overlap when a majority of node clocks runs 3x fast, far beyond the drift factor', () =>
    expectCaught({ name: 'neg-clock-3x-majority', rules: [2], locker: { fencing: true } }, async ({ cluster, faults, lockers, resource }) => {
      const [a, b] = lockers as [NonNullable<(typeof lockers)[0]>, NonNullable<(typeof lockers)[0]>];
      const admins = MAJORITY.map((i) => cluster.admin(i));
      await waitReady(admins);
      const lockA = await a.acquire(resource, 6_000);
      const nemeses = admins.map((admin) => new SkewNemesis(admin, { rate: 3, match: resource }));
      const ends = MAJORITY.map((i) => faults.begin('clock x3', cluster.nodeName(i)));
      for (const nemesis of nemeses) nemesis.start();
      try {
        // A's keys vanish from n0..n2 after about a third of the TTL; B waits for them.
        const lockB = await b.acquire(resource, 6_000, { acquireTimeoutMs: 5_000 });
        await holdBothThenRelease(lockA, lockB);
      } finally {
        await Promise.all(nemeses.map((n) => n.stop()));
        for (const end of ends) end();
      }
    }));

  it('reports an overlap when a majority of node clocks jumps forward by the TTL', () =>
    expectCaught({ name: 'neg-clock-jump-majority', rules: [2], locker: { fencing: true } }, async ({ cluster, faults, lockers, resource }) => {
      const [a, b] = lockers as [NonNullable<(typeof lockers)[0]>, NonNullable<(typeof lockers)[0]>];
      const admins = MAJORITY.map((i) => cluster.admin(i));
      await waitReady(admins);
      const lockA = await a.acquire(resource, 10_000);
      await Promise.all(
        admins.map(async (admin, i) => {
          faults.instant('clock jump', cluster.nodeName(i), '+10000 ms');
          await new SkewNemesis(admin, { rate: 1, match: resource }).jump(10_000);
        }),
      );
      const lockB = await b.acquire(resource, 10_000, { acquireTimeoutMs: 8_000 });
      await holdBothThenRelease(lockA, lockB);
    }));
});
