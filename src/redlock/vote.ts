import type { LockNode, NodeRequest, RequestLimit } from '../node/LockNode.js';
import type { NodeOutcome } from '../shared/outcome.js';
import { verdict } from './quorum.js';

export interface VoteResult<O extends NodeOutcome> {
  readonly granted: boolean;
  /** The outcomes known when the vote was decided, in node order. */
  readonly outcomes: readonly O[];
  /** Each node's outcome when the vote was decided (undefined: no answer yet), by node index. */
  readonly byNode: readonly (O | undefined)[];
  /** Every node's outcome, once the last one has answered or timed out (built when first read). */
  readonly settled: Promise<readonly O[]>;
  /** Per node, now (not when decided): no answer yet. */
  stillOut(): readonly boolean[];
}

/**
 * Sends one request to every node at once and resolves as soon as the votes
 * decide, without waiting for the slowest node. An `ok` outcome is a vote for;
 * anything else (another holder, an error, a timeout) is a vote against.
 */
export function vote<O extends NodeOutcome>(
  nodes: readonly LockNode[],
  quorum: number,
  request: NodeRequest<unknown, O>,
  limit: RequestLimit,
): Promise<VoteResult<O>> {
  if (nodes.length === 1 && quorum === 1) {
    // One node decides alone: no ballot (a single-node lock's commonest path, often run on cold caches).
    const only = nodes[0] as LockNode;
    return new Promise((resolve) => only.send(request, limit, (outcome) => resolve(new SoleVote(outcome))));
  }
  return new Promise((resolve) => {
    const ballot = new Ballot<O>(nodes.length, quorum, resolve);
    nodes.forEach((node, index) => node.send(request, limit, (outcome) => ballot.count(index, outcome)));
  });
}

/** The outcomes of one vote as they arrive: decides once, and settles when every node has answered. */
class Ballot<O extends NodeOutcome> {
  readonly #answers: (O | undefined)[];
  #waiting: number;
  #votesFor = 0;
  #votesAgainst = 0;
  #decided: Decided<O> | undefined;
  #settle: ((outcomes: readonly O[]) => void) | undefined;

  constructor(
    private readonly total: number,
    private readonly quorum: number,
    private readonly decide: (result: VoteResult<O>) => void,
  ) {
    // Filled, not sparse: byNode is read with some() and map(), which skip holes (a node not yet answered went unnoticed so).
    this.#answers = new Array<O | undefined>(total).fill(undefined);
    this.#waiting = total;
  }

  count(index: number, outcome: O): void {
    this.#answers[index] = outcome;
    this.#waiting--;
    if (this.#decided === undefined) {
      if (outcome.status === 'ok') this.#votesFor++;
      else this.#votesAgainst++;
      const state = verdict(this.total, this.quorum, this.#votesFor, this.#votesAgainst);
      if (state !== 'pending') {
        const answers = this.#answers;
        this.#decided = new Decided(state === 'granted', answers.filter((o): o is O => o !== undefined), answers.slice(), this);
        this.decide(this.#decided);
      }
    }
    if (this.#waiting === 0) this.#settle?.(this.#answers as O[]);
  }

  /** Per node: no answer yet. */
  unanswered(): boolean[] {
    return this.#answers.map((answer) => answer === undefined);
  }

  /** Every node's outcome, once all have answered. */
  settled(): Promise<readonly O[]> {
    if (this.#waiting === 0) return Promise.resolve(this.#answers as O[]);
    return new Promise((resolve) => {
      this.#settle = resolve;
    });
  }
}

/** A decided vote; `settled` is built when first read, since most callers never wait for the slowest node. */
class Decided<O extends NodeOutcome> implements VoteResult<O> {
  #settled: Promise<readonly O[]> | undefined;

  constructor(
    readonly granted: boolean,
    readonly outcomes: readonly O[],
    readonly byNode: readonly (O | undefined)[],
    private readonly ballot: Ballot<O>,
  ) {}

  get settled(): Promise<readonly O[]> {
    this.#settled ??= this.ballot.settled();
    return this.#settled;
  }

  stillOut(): readonly boolean[] {
    return this.ballot.unanswered();
  }
}

/** The vote of a single node: its one outcome decides and settles it. */
class SoleVote<O extends NodeOutcome> implements VoteResult<O> {
  readonly granted: boolean;
  readonly outcomes: readonly O[];

  constructor(outcome: O) {
    this.granted = outcome.status === 'ok';
    this.outcomes = [outcome];
  }

  get byNode(): readonly (O | undefined)[] {
    return this.outcomes;
  }

  get settled(): Promise<readonly O[]> {
    return Promise.resolve(this.outcomes);
  }

  stillOut(): readonly boolean[] {
    return [false];
  }
}
