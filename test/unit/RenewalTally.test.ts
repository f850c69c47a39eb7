import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RenewalsOutcome } from '../../src/node/LockNode.js';
import { quorumFor, verdict } from '../../src/redlock/quorum.js';
import { RenewalTally } from '../../src/redlock/RenewalTally.js';

/** A node's answer for a batch of `locks`: each lock extended or not, or the whole batch failed. */
const answerArb = (locks: number) =>
  fc.oneof(
    fc.array(fc.boolean(), { minLength: locks, maxLength: locks }).map((extended) => ({ status: 'ok' as const, extended })),
    fc.constantFrom({ status: 'timeout' as const }, { status: 'error' as const }),
  );

describe('RenewalTally', () => {
  it('decides each lock of a batch once, by its own votes, as soon as they allow; a failed node counts against all', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }).chain((nodes) =>
          fc.integer({ min: 1, max: 20 }).chain((locks) =>
            fc.record({
              nodes: fc.constant(nodes),
              locks: fc.constant(locks),
              answers: fc.array(answerArb(locks), { minLength: nodes, maxLength: nodes }),
            }),
          ),
        ),
        ({ nodes, locks, answers }) => {
          const quorum = quorumFor(nodes);
          const decided = new Map<number, { granted: boolean; afterAnswers: number; okOutcomes: number }>();
          let answered = 0;
          const tally = new RenewalTally(nodes, quorum, locks, (index, granted, outcomes) => {
            expect(decided.has(index), `lock ${index} decided twice`).toBe(false);
            decided.set(index, { granted, afterAnswers: answered, okOutcomes: outcomes.filter((o) => o.status === 'ok').length });
          });
          answers.forEach((answer, node) => {
            answered++;
            const outcome: RenewalsOutcome =
              answer.status === 'ok'
                ? { node: `n${node}`, status: 'ok', ms: 1, extended: answer.extended }
                : { node: `n${node}`, status: answer.status, ms: 1, error: new Error(answer.status) };
            tally.count(outcome);
          });
          for (let lock = 0; lock < locks; lock++) {
            // The model: the lock's votes in answer order, and the first answer after which they decide.
            let votesFor = 0;
            let votesAgainst = 0;
            let expected: { granted: boolean; afterAnswers: number } | undefined;
            answers.forEach((answer, i) => {
              if (expected) return;
              if (answer.status === 'ok' && answer.extended[lock] === true) votesFor++;
              else votesAgainst++;
              const state = verdict(nodes, quorum, votesFor, votesAgainst);
              if (state !== 'pending') expected = { granted: state === 'granted', afterAnswers: i + 1 };
            });
            const got = decided.get(lock);
            expect(got, `lock ${lock} never decided`).toBeDefined();
            expect({ granted: got?.granted, afterAnswers: got?.afterAnswers }).toEqual(expected);
            if (got?.granted) expect(got.okOutcomes).toBe(quorum);
          }
        },
      ),
    );
  });
});
