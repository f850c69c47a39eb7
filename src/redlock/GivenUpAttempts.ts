import type { NodeOutcome } from '../shared/outcome.js';

/** A failed attempt of an acquire whose write some node may still apply. */
export interface GivenUpAttempt {
  /** The keys it wrote (a semaphore's attempts try other permit slots with the same value). */
  readonly keys: readonly string[];
  /** Per node: no answer yet when the vote was decided, so its undo went out while the write was still out. */
  readonly unanswered: readonly boolean[];
  /** Some node had timed out when the vote was decided. */
  readonly timedOut: boolean;
  /** Every node's outcome, once all answered or timed out. */
  readonly settled: Promise<readonly (NodeOutcome | undefined)[]>;
}

/**
 * The failed attempts of acquires still running, by lock value, whose write
 * was given up on somewhere (a timeout, or no answer by the time the vote
 * was decided; an error is an answer: the undo went out after it). Their undo went out, but on a synced node the write
 * went on a connection of its own: replayed after a failover, it can land
 * after the undo. Attempts of one acquire share a value, so the undo cannot
 * be sent again after the write while the acquire may still take the keys
 * with that value; once the acquire has ended, it can (see abandon).
 */
export class GivenUpAttempts {
  readonly #byValue = new Map<string, GivenUpAttempt[]>();

  /** An attempt of `value` on `keys` failed after `outcomes` (those decided): noted when some write was given up on. */
  note(value: string, keys: readonly string[], outcomes: readonly (NodeOutcome | undefined)[], settled: () => GivenUpAttempt['settled']): void {
    // One pass for both flags; an index loop also counts a hole (a sparse array) as unanswered, where some() and map() skip it.
    const unanswered: boolean[] = [];
    let givenUp = false;
    let timedOut = false;
    for (let index = 0; index < outcomes.length; index++) {
      const outcome = outcomes[index];
      unanswered.push(outcome === undefined);
      if (outcome === undefined) givenUp = true;
      else if (outcome.status === 'timeout') givenUp = timedOut = true;
    }
    if (!givenUp) return;
    const attempts = this.#byValue.get(value);
    const attempt = { keys, unanswered, timedOut, settled: settled() };
    if (attempts) attempts.push(attempt);
    else this.#byValue.set(value, [attempt]);
  }

  /**
   * The acquire of `value` ended; `kept` are the keys its lock holds with
   * that value (undefined: it holds none). Returns, per set of keys the lock
   * does not hold, on which nodes a write of it may have run after its undo
   * (mayHaveFollowedUndo), once every attempt on them has settled: those
   * writes are to be undone. The lock's own release covers the keys it
   * holds, and only it may delete them (`coveredByLock`: a write of them
   * had timed out, which the lock is to watch for).
   */
  take(value: string, kept: readonly string[] | undefined): { released: Abandoned[]; coveredByLock: boolean } {
    // Most acquires gave up on nothing: no allocation on their path.
    const attempts = this.#byValue.size === 0 ? undefined : this.#byValue.get(value);
    if (!attempts) return NOTHING_GIVEN_UP;
    this.#byValue.delete(value);
    const byKeys = new Map<string, GivenUpAttempt[]>();
    let coveredByLock = false;
    for (const attempt of attempts) {
      // A semaphore's attempts on other slot sets share slots with the lock:
      // undoing those would delete the lock's own keys where it counted them.
      const notKept = kept === undefined ? attempt.keys : attempt.keys.filter((key) => !kept.includes(key));
      // A write resent after NOSCRIPT went out before the next attempt did
      // (the undo the failed attempt awaited answered after it): the lock's
      // own release follows it. A timed-out one may land at any time.
      if (attempt.timedOut && notKept.length < attempt.keys.length) coveredByLock = true;
      if (notKept.length === 0) continue;
      const id = notKept.join('\0');
      const same = byKeys.get(id);
      if (same) same.push({ ...attempt, keys: notKept });
      else byKeys.set(id, [{ ...attempt, keys: notKept }]);
    }
    const released = [...byKeys.values()].map((same) => ({
      keys: (same[0] as GivenUpAttempt).keys,
      mayFollowUndo: Promise.all(same.map((attempt) => attempt.settled)).then((all) =>
        (all[0] ?? []).map((_, index) => all.some((outcomes, k) => mayHaveFollowedUndo(outcomes[index], same[k]?.unanswered[index] === true))),
      ),
    }));
    return { released, coveredByLock };
  }
}

/**
 * A write that timed out may run at any later time. One still out when the
 * undo was sent, and answered `ok`, may have run after the undo too: the
 * undo follows it on the same connection, but a script that met NOSCRIPT is
 * sent again in full behind whatever was queued after it, the undo included
 * (an attempt's first use of a script on a node: it then kept its keys for
 * their whole TTL). So may one that answered an error: the resent script
 * can have run before the connection broke (only `held` says it wrote nothing).
 */
function mayHaveFollowedUndo(outcome: NodeOutcome | undefined, unanswered: boolean): boolean {
  const status = outcome?.status;
  return status === 'timeout' || (unanswered && (status === 'ok' || status === 'error'));
}

const NOTHING_GIVEN_UP: { released: Abandoned[]; coveredByLock: boolean } = Object.freeze({ released: [], coveredByLock: false });

/** Keys an ended acquire wrote without keeping them, and per node whether a write of them may have run after its undo there. */
export interface Abandoned {
  readonly keys: readonly string[];
  readonly mayFollowUndo: Promise<readonly boolean[]>;
}

