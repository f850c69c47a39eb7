import { renewalOutcome, type RenewalsOutcome } from '../node/LockNode.js';
import type { NodeOutcome } from '../shared/outcome.js';
import { verdict } from './quorum.js';

/**
 * The votes of a batch of renewals, lock by lock, as the nodes' answers for
 * the whole batch arrive: each lock is decided on its own, as early as its
 * votes allow (the rules of vote.ts), and reported once. Counting is two
 * bytes per lock; a lock's outcomes are built when it is decided, and the
 * locks every answering node extended share one array of them: with ten
 * thousand locks, a Ballot and five outcome objects per lock were most of
 * a renewal's garbage.
 */
export class RenewalTally {
  readonly #nodeCount: number;
  readonly #quorum: number;
  readonly #for: Uint8Array;
  readonly #against: Uint8Array;
  readonly #decided: Uint8Array;
  readonly #answers: RenewalsOutcome[] = [];
  /** By how many nodes had answered: their outcomes, when each extended the lock. */
  readonly #allExtended: (readonly NodeOutcome[])[] = [];
  readonly #decide: (index: number, granted: boolean, outcomes: readonly NodeOutcome[]) => void;

  constructor(nodeCount: number, quorum: number, locks: number, decide: (index: number, granted: boolean, outcomes: readonly NodeOutcome[]) => void) {
    this.#nodeCount = nodeCount;
    this.#quorum = quorum;
    this.#for = new Uint8Array(locks);
    this.#against = new Uint8Array(locks);
    this.#decided = new Uint8Array(locks);
    this.#decide = decide;
  }

  /** One node's answer for the whole batch (an error or a timeout counts against every lock). */
  count(answer: RenewalsOutcome): void {
    this.#answers.push(answer);
    const extended = answer.status === 'ok' ? answer.extended : undefined;
    const locks = this.#for.length;
    for (let i = 0; i < locks; i++) {
      if (this.#decided[i] === 1) continue;
      if (extended?.[i] === true) this.#for[i] = (this.#for[i] as number) + 1;
      else this.#against[i] = (this.#against[i] as number) + 1;
      const state = verdict(this.#nodeCount, this.#quorum, this.#for[i] as number, this.#against[i] as number);
      if (state === 'pending') continue;
      this.#decided[i] = 1;
      this.#decide(i, state === 'granted', this.#outcomesOf(i));
    }
  }

  #outcomesOf(index: number): readonly NodeOutcome[] {
    const answered = this.#answers.length;
    if (this.#against[index] !== 0) return this.#answers.map((answer) => renewalOutcome(answer, index));
    let shared = this.#allExtended[answered];
    if (!shared) {
      shared = Object.freeze(this.#answers.map((answer) => renewalOutcome(answer, index)));
      this.#allExtended[answered] = shared;
    }
    return shared;
  }
}
