import type { LockNode } from '../node/LockNode.js';
import type { NodeOutcome } from '../node/outcome.js';
import { verdict } from './quorum.js';

export interface VoteResult<O extends NodeOutcome> {
  readonly granted: boolean;
  /** The outcomes known when the vote was decided, in node order. */
  readonly outcomes: readonly O[];
  /** Each node's outcome when the vote was decided (undefined: no answer yet), by node index. */
  readonly byNode: readonly (O | undefined)[];
  /** Every node's outcome, once the last one has answered or timed out (built when first read). */
  readonly settled: Promise<readonly O[]>;
}

/**
 * Sends one request to every node at once and resolves as soon as the votes
 * decide, without waiting for the slowest node. An `ok` outcome is a vote for;
 * anything else (another holder, an error, a timeout) is a vote against.
 */
export function vote<O extends NodeOutcome>(
  nodes: readonly LockNode[],
  quorum: number,
  request: (node: LockNode) => Promise<O>,
): Promise<VoteResult<O>> {
  const total = nodes.length;
  const answers: (O | undefined)[] = new Array<O | undefined>(total);
  let votesFor = 0;
  let votesAgainst = 0;
  let decided = false;

  const known = (): O[] => answers.filter((o): o is O => o !== undefined);

  return new Promise((resolve) => {
    const requests = nodes.map((node, index) =>
      request(node).then((outcome) => {
        answers[index] = outcome;
        if (decided) return outcome;
        if (outcome.status === 'ok') votesFor++;
        else votesAgainst++;
        const state = verdict(total, quorum, votesFor, votesAgainst);
        if (state !== 'pending') {
          decided = true;
          resolve(new Decided(state === 'granted', known(), answers.slice(), requests));
        }
        return outcome;
      }),
    );
  });
}

/** A decided vote; `settled` is built when first read, since most callers never wait for the slowest node. */
class Decided<O extends NodeOutcome> implements VoteResult<O> {
  #settled: Promise<readonly O[]> | undefined;

  constructor(
    readonly granted: boolean,
    readonly outcomes: readonly O[],
    readonly byNode: readonly (O | undefined)[],
    private readonly requests: readonly Promise<O>[],
  ) {}

  get settled(): Promise<readonly O[]> {
    this.#settled ??= Promise.all(this.requests);
    return this.#settled;
  }
}
