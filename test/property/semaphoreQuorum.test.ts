/**
 * The search for a semaphore's counterexample: acquirers race on simulated
 * nodes, each request reaching each node in an order the search picks, with
 * nodes down (a minority, as the Redlock assumptions allow) and replies lost
 * after the node applied the request. A holder keeps its permits to the end,
 * the worst case; expiry is left to the mutex's validity argument. After every
 * grant the permits held must be at most the limit.
 *
 * Two rules run the same search:
 * - counting: each node admits up to `limit` holders, a majority of admitting
 *   nodes grants a permit (redis-semaphore's RedlockSemaphore). The search
 *   must find it unsafe for limit 2: the teeth.
 * - slots: quorumlock's rule, with its own pieces (quorumFor, candidateSlots,
 *   permitKeys, and the scripts themselves on in-memory nodes). The
 *   search must find nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quorumFor } from '../../src/redlock/quorum.js';
import { candidateSlots } from '../../src/semaphore/candidateSlots.js';
import { permitKeys } from '../../src/semaphore/permitKeys.js';
import { Rng } from '../chaos/run/rng.js';
import { semaphoreAcquireScript } from '../../src/scripts/semaphore.js';
import { releasePlainScript } from '../../src/scripts/release.js';
import { SimulatedNode } from '../support/SimulatedNode.js';
import { checkProperty, parametersFor, report, timeoutFor } from './fcConfig.js';

const RESOURCE = 'r';
const TTL_MS = 60_000;

interface Step {
  readonly who: number;
  readonly node: number;
  readonly replyLost: boolean;
}

interface Race {
  readonly nodes: number;
  readonly limit: number;
  readonly permits: readonly number[];
  readonly seeds: readonly number[];
  readonly down: readonly number[];
  readonly steps: readonly Step[];
}

/** How one rule takes and gives back permits on one node. */
interface NodeRule {
  /** True when the node granted `who` its attempt. */
  take(node: number, who: number, attempt: readonly number[]): boolean;
  undo(node: number, who: number, attempt: readonly number[]): void;
}

interface Rule {
  readonly name: string;
  nodes(race: Race): NodeRule;
  /** The slot sets `who` tries, one vote each, in order (one empty set: a rule without slots). */
  attempts(race: Race, who: number): readonly (readonly number[])[];
}

const counting: Rule = {
  name: 'counting',
  nodes(race) {
    const admitted = Array.from({ length: race.nodes }, () => new Map<number, number>());
    const held = (node: number): number => [...(admitted[node] as Map<number, number>).values()].reduce((a, b) => a + b, 0);
    return {
      take(node, who) {
        const permits = race.permits[who] as number;
        if (held(node) + permits > race.limit) return false;
        (admitted[node] as Map<number, number>).set(who, permits);
        return true;
      },
      undo(node, who) {
        (admitted[node] as Map<number, number>).delete(who);
      },
    };
  },
  attempts: () => [[]],
};

const slots: Rule = {
  name: 'slots',
  nodes(race) {
    // The scripts themselves, applied at once in the order the race delivers them.
    const nodes = Array.from({ length: race.nodes }, (_, i) => new SimulatedNode(`n${i}`));
    const on = (node: number) => nodes[node] as SimulatedNode;
    return {
      take: (node, who, attempt) => {
        const reply = on(node).evalNow(semaphoreAcquireScript.source, permitKeys(RESOURCE, attempt), [`v${who}`, TTL_MS, race.limit]);
        return Array.isArray(reply) && reply[0] === 1;
      },
      undo: (node, who, attempt) => void on(node).evalNow(releasePlainScript.source, permitKeys(RESOURCE, attempt), [`v${who}`]),
    };
  },
  attempts(race, who) {
    const rng = new Rng(race.seeds[who] as number);
    return candidateSlots(race.limit, race.permits[who] as number, () => rng.next());
  },
};

interface Acquirer {
  readonly attempts: readonly (readonly number[])[];
  attempt: number;
  pending: number[];
  votesFor: number;
  /** Nodes the attempt reached (whatever they answered): its undo goes to all of them. */
  reached: number[];
  state: 'trying' | 'holding' | 'failed';
}

/** Plays the race; returns the largest number of permits held at once. */
function play(rule: Rule, race: Race): { mostHeld: number; holders: number } {
  const quorum = quorumFor(race.nodes);
  const nodes = rule.nodes(race);
  const everyNode = (): number[] => Array.from({ length: race.nodes }, (_, node) => node);
  const acquirers: Acquirer[] = race.permits.map((_, who) => ({
    attempts: rule.attempts(race, who),
    attempt: 0,
    pending: everyNode(),
    votesFor: 0,
    reached: [],
    state: 'trying',
  }));
  let mostHeld = 0;
  const heldNow = (): number => acquirers.reduce((sum, a, who) => sum + (a.state === 'holding' ? (race.permits[who] as number) : 0), 0);
  const deliver = (who: number, pick: number, replyLost: boolean): void => {
    const acquirer = acquirers[who] as Acquirer;
    const [node] = acquirer.pending.splice(pick % acquirer.pending.length, 1) as [number];
    const current = acquirer.attempts[acquirer.attempt] as readonly number[];
    if (!race.down.includes(node)) {
      acquirer.reached.push(node);
      if (nodes.take(node, who, current) && !replyLost) acquirer.votesFor++;
    }
    if (acquirer.pending.length > 0) return;
    if (acquirer.votesFor >= quorum) {
      acquirer.state = 'holding';
      mostHeld = Math.max(mostHeld, heldNow());
      return;
    }
    for (const reached of acquirer.reached) nodes.undo(reached, who, current);
    acquirer.attempt++;
    if (acquirer.attempt === acquirer.attempts.length) {
      acquirer.state = 'failed';
      return;
    }
    Object.assign(acquirer, { pending: everyNode(), votesFor: 0, reached: [] });
  };
  const trying = (): number[] => acquirers.flatMap((a, who) => (a.state === 'trying' ? [who] : []));
  for (const step of race.steps) {
    const active = trying();
    if (active.length === 0) break;
    deliver(active.includes(step.who) ? step.who : (active[step.who % active.length] as number), step.node, step.replyLost);
  }
  // Whatever the steps left undelivered arrives in order, so every acquirer decides.
  for (let active = trying(); active.length > 0; active = trying()) deliver(active[0] as number, 0, false);
  return { mostHeld, holders: acquirers.filter((a) => a.state === 'holding').length };
}

function raceArb(options: { nodes: readonly number[]; limits: readonly number[]; maxPermits: number }): fc.Arbitrary<Race> {
  return fc
    .record({ nodes: fc.constantFrom(...options.nodes), limit: fc.constantFrom(...options.limits) })
    .chain(({ nodes, limit }) =>
      fc.record({
        nodes: fc.constant(nodes),
        limit: fc.constant(limit),
        permits: fc.array(fc.integer({ min: 1, max: Math.min(limit, options.maxPermits) }), { minLength: limit + 1, maxLength: limit + 3 }),
        seeds: fc.array(fc.nat(), { minLength: limit + 3, maxLength: limit + 3 }),
        down: fc.subarray(
          Array.from({ length: nodes }, (_, node) => node),
          { maxLength: nodes - quorumFor(nodes) },
        ),
        steps: fc.array(
          fc.record({ who: fc.nat(30), node: fc.nat(30), replyLost: fc.nat(9).map((n) => n === 0) }),
          { maxLength: 120 },
        ),
      }),
    );
}

const SEARCH_RUNS = 300;

describe('the semaphore quorum, searched for more than limit permits held', () => {
  it(
    'finds a counterexample for the majority-of-counting-nodes rule with limit 2 (the search has teeth)',
    async () => {
      const race = raceArb({ nodes: [5], limits: [2], maxPermits: 1 });
      const details = await fc.check(
        fc.property(race, (r) => play(counting, r).mostHeld <= r.limit),
        parametersFor(SEARCH_RUNS),
      );
      expect(details.failed, 'the search found no overlap for the counting rule').toBe(true);
      const [found] = details.counterexample as [Race];
      const outcome = play(counting, found);
      report('counting counterexample', { nodes: found.nodes, limit: found.limit, acquirers: found.permits.length, held: outcome.mostHeld });
      expect(outcome.mostHeld).toBeGreaterThan(found.limit);
    },
    timeoutFor(SEARCH_RUNS, 10_000),
  );

  it(
    'finds none for the slot rule, whatever the arrival orders, nodes down and lost replies',
    async () => {
      const tally = { runs: 0, someoneHeld: 0, full: 0, refused: 0 };
      await checkProperty(
        fc.property(raceArb({ nodes: [1, 3, 5], limits: [1, 2, 3, 4], maxPermits: 3 }), (race) => {
          const outcome = play(slots, race);
          tally.runs++;
          if (outcome.holders > 0) tally.someoneHeld++;
          if (outcome.mostHeld === race.limit) tally.full++;
          if (outcome.holders < race.permits.length) tally.refused++;
          return outcome.mostHeld <= race.limit;
        }),
        SEARCH_RUNS * 10,
      );
      report('slot rule', tally);
      // The races were real ones: permits ran out, some acquirers were refused.
      expect(tally.full).toBeGreaterThan(tally.runs / 10);
      expect(tally.refused).toBeGreaterThan(tally.runs / 10);
    },
    // The real scripts on the Lua VM: about 6 s on a quiet 2-core machine, several times that beside the whole suite.
    timeoutFor(SEARCH_RUNS * 10, 120_000),
  );

  it('the counting rule is the issue’s example: A, B and C each win a majority of five nodes with limit 2', () => {
    // Node n admits the first two to arrive; arrival orders per node as in the issue (0 = A, 1 = B, 2 = C).
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [0, 2, 1],
      [1, 2, 0],
      [0, 1, 2],
    ];
    // Each step names its acquirer, and its node by its index among the nodes that acquirer has not reached yet.
    const reached = new Set<string>();
    const steps = orders.flatMap((order, node) =>
      order.map((who) => {
        const pick = [0, 1, 2, 3, 4].filter((n) => !reached.has(`${who}:${n}`)).indexOf(node);
        reached.add(`${who}:${node}`);
        return { who, node: pick, replyLost: false };
      }),
    );
    const race: Race = { nodes: 5, limit: 2, permits: [1, 1, 1], seeds: [1, 2, 3], down: [], steps };
    expect(play(counting, race).mostHeld).toBe(3);
    expect(play(slots, race).mostHeld).toBeLessThanOrEqual(2);
  });
});
