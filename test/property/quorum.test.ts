/**
 * Quorum resolution (design rule 3): `verdict` over every order and mix of
 * node outcomes for N = 1..9, exhaustively; and `vote` driven by LockNodes over
 * simulated nodes, with random outcomes and reply times on fake timers.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/clock/Clock.js';
import { NodeTimeoutError } from '../../src/shared/errors.js';
import { acquireRequest, LockNode } from '../../src/node/LockNode.js';
import type { NodeOutcome, NodeStatus } from '../../src/shared/outcome.js';
import { denialCause, quorumFor, verdict } from '../../src/redlock/quorum.js';
import { vote } from '../../src/redlock/vote.js';
import { type RequestPlan, SimulatedNode } from '../support/SimulatedNode.js';
import { checkProperty, timeoutFor } from './fcConfig.js';

const STATUSES: readonly NodeStatus[] = ['ok', 'held', 'error', 'timeout'];
const isFailure = (status: NodeStatus): boolean => status === 'error' || status === 'timeout';

describe('verdict', () => {
  it('decides every order and mix of outcomes for N = 1..9 exactly once, correctly and as early as possible', () => {
    for (let n = 1; n <= 9; n++) {
      const quorum = quorumFor(n);
      expect(quorum).toBe(Math.floor(n / 2) + 1);
      const sequence = new Array<number>(n).fill(0);
      // Every sequence in {ok, held, error, timeout}^n, as an odometer.
      for (let total = 4 ** n, index = 0; index < total; index++) {
        let rest = index;
        for (let i = 0; i < n; i++) {
          sequence[i] = rest % 4;
          rest = Math.floor(rest / 4);
        }
        let votesFor = 0;
        let votesAgainst = 0;
        let failures = 0;
        let decidedAt: number | undefined;
        let decision: string | undefined;
        for (let step = 0; step < n; step++) {
          const status = STATUSES[sequence[step] as number] as NodeStatus;
          if (status === 'ok') votesFor++;
          else votesAgainst++;
          const state = verdict(n, quorum, votesFor, votesAgainst);
          if (decidedAt === undefined) {
            if (isFailure(status)) failures++;
            if (state === 'pending') continue;
            decidedAt = step;
            decision = state;
            // As early as possible: this very vote crossed the threshold.
            const crossed = state === 'granted' ? votesFor === quorum : votesAgainst === n - quorum + 1;
            // A loss is called an outage only when failures alone rule the quorum out.
            const cause = state === 'granted' || denialCause(n, quorum, failures) === (failures > n - quorum ? 'unreachable' : 'held');
            if (!crossed || !cause) throw new Error(`n=${n} ${sequence.join('')}: ${state} at vote ${step} is late or miscalled`);
          } else if (state !== decision) {
            // Exactly once: later votes never change a decision.
            throw new Error(`n=${n} ${sequence.join('')}: ${decision} at ${decidedAt}, then ${state} at ${step}`);
          }
        }
        // Correct: it always ends, granted exactly when a quorum said ok.
        const oks = sequence.filter((s) => s === 0).length;
        if (decision !== (oks >= quorum ? 'granted' : 'denied')) {
          throw new Error(`n=${n} ${sequence.join('')}: decided ${decision ?? 'nothing'} with ${oks} ok`);
        }
      }
    }
  }, 30_000);
});

// --- vote over LockNodes and simulated nodes --------------------------------------

const NODE_TIMEOUT_MS = 100;
const VOTE_RUNS = 2000;

interface NodeScript {
  readonly status: NodeStatus;
  /** When the outcome reaches the vote: the reply, the error, or the LockNode's timeout. */
  readonly arrivesAt: number;
  readonly plan: RequestPlan;
}

/**
 * One node's behaviour. Replies and errors come at distinct instants below the
 * node timeout (several at one instant would make the order, and so the
 * earliest decision, depend on timer bookkeeping); timeouts are lost replies or
 * replies after the timeout, which must never count.
 */
function nodeScriptArb(replyAt: number): fc.Arbitrary<NodeScript> {
  const applyAfterMs = fc.integer({ min: 0, max: replyAt });
  return fc.oneof(
    applyAfterMs.map((a) => ({ status: 'ok' as const, arrivesAt: replyAt, plan: { applyAfterMs: a, replyAfterMs: replyAt - a } })),
    applyAfterMs.map((a) => ({ status: 'held' as const, arrivesAt: replyAt, plan: { applyAfterMs: a, replyAfterMs: replyAt - a } })),
    fc.constantFrom('fail-before' as const, 'fail-after' as const).chain((fate) =>
      applyAfterMs.map((a) => ({ status: 'error' as const, arrivesAt: replyAt, plan: { applyAfterMs: a, replyAfterMs: replyAt - a, fate } })),
    ),
    fc.oneof(
      fc.constant<RequestPlan>({ applyAfterMs: replyAt, fate: 'lose-reply' }),
      fc.integer({ min: NODE_TIMEOUT_MS, max: 3 * NODE_TIMEOUT_MS }).map<RequestPlan>((late) => ({ replyAfterMs: late })),
      fc.integer({ min: NODE_TIMEOUT_MS, max: 3 * NODE_TIMEOUT_MS }).map<RequestPlan>((late) => ({ replyAfterMs: late, fate: 'fail-after' })),
    ).map((plan) => ({ status: 'timeout' as const, arrivesAt: NODE_TIMEOUT_MS, plan })),
  );
}

const clusterArb = fc
  .integer({ min: 1, max: 9 })
  .chain((n) => fc.uniqueArray(fc.integer({ min: 0, max: NODE_TIMEOUT_MS - 1 }), { minLength: n, maxLength: n }))
  .chain((replyTimes) => fc.tuple(...replyTimes.map(nodeScriptArb)));

/** The fake-timer time, as a Clock: LockNode's timeouts and the nodes' delays run on it. */
const fakeTimerClock: Clock = { now: () => Date.now() };

afterEach(() => {
  vi.useRealTimers();
});

describe('vote', () => {
  it('resolves once, correctly and at the earliest instant the outcomes allow, for N = 1..9', async () => {
    await checkProperty(
      fc.asyncProperty(clusterArb, async (scripts) => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 0 });
        const n = scripts.length;
        const quorum = quorumFor(n);
        const nodes = scripts.map((script, i) => {
          const node = new SimulatedNode(`n${i}`, fakeTimerClock, () => script.plan);
          if (script.status === 'held') node.commandNow('SET', 'r', 'someone else', 'PX', 60_000);
          return new LockNode(node, fakeTimerClock);
        });

        let resolutions = 0;
        let resolvedAt: number | undefined;
        const voting = vote(nodes, quorum, acquireRequest(['r'], 'ours', 60_000), NODE_TIMEOUT_MS).then((result) => {
          resolutions++;
          resolvedAt = fakeTimerClock.now();
          return result;
        });
        await vi.advanceTimersByTimeAsync(4 * NODE_TIMEOUT_MS);
        expect(resolutions).toBe(1);
        const result = await voting;

        // The model: outcomes in arrival order, decided at the first instant a threshold is crossed.
        const arrivals = scripts.map((s, index) => ({ ...s, index })).sort((a, b) => a.arrivesAt - b.arrivesAt);
        let votesFor = 0;
        let votesAgainst = 0;
        let decidedAt = Number.NaN;
        for (const arrival of arrivals) {
          if (arrival.status === 'ok') votesFor++;
          else votesAgainst++;
          if (verdict(n, quorum, votesFor, votesAgainst) !== 'pending') {
            decidedAt = arrival.arrivesAt;
            break;
          }
        }
        const oks = scripts.filter((s) => s.status === 'ok').length;
        expect(result.granted).toBe(oks >= quorum);
        expect(resolvedAt).toBe(decidedAt);

        // As early as possible: the last outcome counted is the one that crossed the threshold.
        const counted = { ok: 0, against: 0 };
        for (const outcome of result.outcomes) outcome.status === 'ok' ? counted.ok++ : counted.against++;
        if (result.granted) {
          expect(counted.ok).toBe(quorum);
          expect(counted.against).toBeLessThanOrEqual(n - quorum);
        } else {
          expect(counted.against).toBe(n - quorum + 1);
          expect(counted.ok).toBeLessThan(quorum);
        }
        // byNode holds exactly the outcomes that had arrived, in node order.
        scripts.forEach((script, i) => {
          const known = result.byNode[i];
          if (script.arrivesAt < decidedAt) expect(known?.status).toBe(script.status);
          if (script.arrivesAt > decidedAt) expect(known).toBeUndefined();
        });
        expect(result.outcomes).toEqual(result.byNode.filter((o): o is NodeOutcome => o !== undefined));

        // Every node's outcome settles, each as scripted; a late reply never counts.
        const settled = await result.settled;
        expect(settled.map((o) => o.status)).toEqual(scripts.map((s) => s.status));
        settled.forEach((outcome, i) => {
          expect(outcome.ms).toBe(scripts[i]?.arrivesAt);
          if (outcome.status === 'timeout') expect(outcome.error).toBeInstanceOf(NodeTimeoutError);
          if (outcome.status === 'error') expect(outcome.error).toBeInstanceOf(Error);
        });
        expect(resolutions).toBe(1);
        vi.useRealTimers();
      }),
      VOTE_RUNS,
    );
  }, timeoutFor(VOTE_RUNS, 30_000));
});
