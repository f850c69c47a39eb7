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
import { semaphoreAcquireScript, semaphoreTakeScript } from '../../src/scripts/semaphore.js';
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

/**
 * The one-node protocol with its handoffs: acquirers take slots the node
 * chooses (semaphoreTake.lua, run on the in-memory node), stand in a FIFO
 * line when too few are free, are handed freed slots as reservations at a
 * release (semaphoreRelease.lua), pass a permit to a waiter of their own
 * process that has not stood in line (LockManager's passToWaiting), and
 * time moves (TTLs and reservations run out; a holder counts only within
 * its validity). After every step, the valid holders hold at most `limit`
 * permits and no slot twice. The same search with a pass whose giver keeps
 * holding must find an overlap: the teeth.
 */
const RESERVATION_MS = 600;
const HOLD_TTL_MS = 2_000;

type HandoffStep =
  | { readonly op: 'try'; readonly who: number; readonly seed: number }
  | { readonly op: 'release'; readonly who: number }
  | { readonly op: 'pass'; readonly who: number; readonly to: number }
  | { readonly op: 'advance'; readonly ms: number };

interface HandoffRace {
  readonly limit: number;
  readonly permits: readonly number[];
  readonly steps: readonly HandoffStep[];
}

interface Actor {
  value: string;
  slots: string[] | undefined;
  validUntil: number;
  inLine: boolean;
}

function playHandoffs(race: HandoffRace, passKeepsGiver: boolean): { mostHeld: number; doubled: boolean; handed: number; passed: number } {
  const limitRecord = permitKeys(RESOURCE, [])[0] as string;
  const allSlots = permitKeys(RESOURCE, Array.from({ length: race.limit }, (_, slot) => slot)).slice(1);
  const actors: Actor[] = race.permits.map(() => ({ value: '', slots: undefined, validUntil: 0, inLine: false }));
  const line: number[] = [];
  let now = 0;
  const node = new SimulatedNode('n0', { now: () => now });
  let mostHeld = 0;
  let doubled = false;
  let handed = 0;
  let passed = 0;
  // Every acquire call has a value of its own (randomValue.ts): a take counts a slot holding it as its own.
  let acquires = 0;
  const nextAcquire = (actor: Actor) => {
    actor.value = `v${acquires++}`;
  };
  const valid = (actor: Actor) => actor.slots !== undefined && actor.validUntil > now;
  for (const actor of actors) nextAcquire(actor);
  const check = () => {
    const held = actors.filter(valid);
    mostHeld = Math.max(mostHeld, held.reduce((sum, actor) => sum + (actor.slots?.length ?? 0), 0));
    const slots = held.flatMap((actor) => actor.slots ?? []);
    if (new Set(slots).size < slots.length) doubled = true;
  };
  for (const step of race.steps) {
    if (step.op === 'advance') {
      now += step.ms;
    } else if (step.op === 'try') {
      const who = step.who % actors.length;
      const actor = actors[who] as Actor;
      if (actor.slots === undefined) {
        const rng = new Rng(step.seed);
        const order = candidateSlots(race.limit, 1, () => rng.next()).map((set) => allSlots[set[0] as number] as string);
        const reply = node.evalNow(semaphoreTakeScript.source, [limitRecord, ...order], [actor.value, HOLD_TTL_MS, race.limit, race.permits[who] as number]);
        if (Array.isArray(reply)) {
          // {1, the record's TTL, the chosen slots' positions in KEYS (2-based)...}
          actor.slots = (reply.slice(2) as number[]).map((position) => order[position - 2] as string);
          // Validity from before the request, on this node's time (no drift in the model: the clock is shared).
          actor.validUntil = now + HOLD_TTL_MS;
          actor.inLine = false;
          line.splice(line.indexOf(who) >>> 0, line.includes(who) ? 1 : 0);
        } else if (!actor.inLine) {
          actor.inLine = true;
          line.push(who);
        }
      }
    } else if (step.op === 'release') {
      const actor = actors[step.who % actors.length] as Actor;
      if (actor.slots !== undefined) {
        for (const slot of actor.slots) {
          if (node.evalNow(releasePlainScript.source, [slot], [actor.value]) === 0) continue;
          const head = line.shift();
          if (head === undefined) continue;
          (actors[head] as Actor).inLine = false;
          // What semaphoreRelease.lua's handoff leaves on the freed slot: the waiter's value and '~', for the reservation's length.
          node.commandNow('SET', slot, `${(actors[head] as Actor).value}~`, 'PX', RESERVATION_MS);
          handed++;
        }
        actor.slots = undefined;
        nextAcquire(actor);
      }
    } else {
      const giver = actors[step.who % actors.length] as Actor;
      const taker = actors[step.to % actors.length] as Actor;
      // A pass goes to a waiter of the process that has not stood in line, for as many permits, within validity.
      if (giver !== taker && valid(giver) && taker.slots === undefined && !taker.inLine && race.permits[actors.indexOf(taker)] === giver.slots?.length) {
        taker.slots = giver.slots;
        taker.value = giver.value;
        taker.validUntil = giver.validUntil;
        if (!passKeepsGiver) {
          giver.slots = undefined;
          nextAcquire(giver);
        }
        passed++;
      }
    }
    check();
  }
  return { mostHeld, doubled, handed, passed };
}

function handoffRaceArb(maxPermits: number): fc.Arbitrary<HandoffRace> {
  return fc.constantFrom(1, 2, 3, 4).chain((limit) =>
    fc.record({
      limit: fc.constant(limit),
      permits: fc.array(fc.integer({ min: 1, max: Math.min(limit, maxPermits) }), { minLength: limit + 1, maxLength: limit + 3 }),
      steps: fc.array(
        fc.oneof(
          { weight: 4, arbitrary: fc.record({ op: fc.constant('try' as const), who: fc.nat(8), seed: fc.nat() }) },
          { weight: 2, arbitrary: fc.record({ op: fc.constant('release' as const), who: fc.nat(8) }) },
          { weight: 2, arbitrary: fc.record({ op: fc.constant('pass' as const), who: fc.nat(8), to: fc.nat(8) }) },
          { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(100, 300, 700, 2_500) }) },
        ),
        { maxLength: 80 },
      ),
    }),
  );
}

describe('the one-node handoff protocol, searched for more than limit permits or a slot held twice', () => {
  it(
    'finds none with takes, handed reservations, passes inside a process and expiry',
    async () => {
      const tally = { runs: 0, full: 0, handed: 0, passed: 0 };
      await checkProperty(
        fc.property(handoffRaceArb(2), (race) => {
          const outcome = playHandoffs(race, false);
          tally.runs++;
          if (outcome.mostHeld === race.limit) tally.full++;
          if (outcome.handed > 0) tally.handed++;
          if (outcome.passed > 0) tally.passed++;
          return outcome.mostHeld <= race.limit && !outcome.doubled;
        }),
        SEARCH_RUNS * 10,
      );
      report('one-node handoffs', tally);
      // The races were real ones: the semaphore filled, slots were handed on and permits passed.
      expect(tally.full).toBeGreaterThan(tally.runs / 10);
      expect(tally.handed).toBeGreaterThan(tally.runs / 50);
      expect(tally.passed).toBeGreaterThan(tally.runs / 50);
    },
    timeoutFor(SEARCH_RUNS * 10, 20_000),
  );

  it(
    'finds an overlap when a pass leaves the giver holding (the search has teeth)',
    async () => {
      const details = await fc.check(
        fc.property(handoffRaceArb(1), (race) => {
          const outcome = playHandoffs(race, true);
          return outcome.mostHeld <= race.limit && !outcome.doubled;
        }),
        parametersFor(SEARCH_RUNS),
      );
      expect(details.failed, 'the search found no overlap for a pass that keeps its giver').toBe(true);
    },
    timeoutFor(SEARCH_RUNS, 10_000),
  );
});
