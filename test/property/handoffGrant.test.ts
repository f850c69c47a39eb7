/**
 * A handoff taken as the lock (wakeup/handoffGrant.ts) keeps design rule 2:
 * on every node it counts, the reservation outlives the validity the waiter
 * is given, whatever the order in which replies and announcements arrive.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { driftFor, validUntil } from '../../src/clock/validity.js';
import { handedReservation, type HandoffStamp } from '../../src/wakeup/handoffGrant.js';
import { checkProperty, timeoutFor } from './fcConfig.js';

const RUNS = 2000;
const SETTINGS = { driftFactor: 0.01, driftMs: 2 };

/**
 * One node as the waiter's last attempt met it: the attempt sent at real time
 * `sentAt` reaches the node `transitMs` later and keeps the waiter in line; a
 * handoff to the waiter happens `handoffAfterMs` after that (negative: before
 * it, an older handoff whose announcement arrives late). The node's clock runs
 * at `rate` (within the drift factor) from `offsetUs`.
 */
const nodeArb = fc.record({
  transitMs: fc.double({ min: 0, max: 50, noNaN: true }),
  handoffAfterMs: fc.oneof(fc.double({ min: -1000, max: 1000, noNaN: true }), fc.constantFrom(0, 0.001, -0.001)),
  announced: fc.boolean(),
  replied: fc.boolean(),
  reservationMs: fc.integer({ min: 1, max: 2000 }),
  rate: fc.double({ min: 1 - SETTINGS.driftFactor, max: 1 + SETTINGS.driftFactor, noNaN: true }),
  offsetUs: fc.integer({ min: -1e12, max: 1e12 }),
});

describe('a handoff taken as the lock', () => {
  it('is counted only on nodes whose reservation lasts past the validity given, and only on a quorum of them', async () => {
    await checkProperty(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 7 }), fc.double({ min: 0, max: 1e7, noNaN: true }), (nodes, sentAt) => {
        const serverUs = (node: (typeof nodes)[number], realMs: number) => Math.floor(node.offsetUs + realMs * 1000 * node.rate);
        const stamps: (HandoffStamp | undefined)[] = [];
        const waitingSince: (number | undefined)[] = [];
        nodes.forEach((node, i) => {
          const repliedAt = sentAt + node.transitMs;
          if (node.replied) waitingSince[i] = serverUs(node, repliedAt);
          if (node.announced) stamps[i] = { serverUs: serverUs(node, repliedAt + node.handoffAfterMs), reservationMs: node.reservationMs };
        });
        const quorum = Math.floor(nodes.length / 2) + 1;
        const handed = handedReservation(stamps, waitingSince, quorum);
        if (handed === undefined) return;
        expect(handed.nodes.length).toBeGreaterThanOrEqual(quorum);
        const until = validUntil(handed.reservationMs, sentAt, SETTINGS);
        for (const i of handed.nodes) {
          const node = nodes[i] as (typeof nodes)[number];
          // Real time at which the key stops being ours there: the reservation, on the node's clock.
          const handoffAt = sentAt + node.transitMs + node.handoffAfterMs;
          expect(node.handoffAfterMs).toBeGreaterThan(-1e-9);
          expect(handoffAt + node.reservationMs / node.rate).toBeGreaterThanOrEqual(until - 1e-6);
          expect(handed.reservationMs).toBeLessThanOrEqual(node.reservationMs);
        }
        expect(driftFor(handed.reservationMs, SETTINGS)).toBeGreaterThan(0);
      }),
      RUNS,
    );
  }, timeoutFor(RUNS, 10_000));
});
