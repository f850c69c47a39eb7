import { realSetImmediate } from '../shared/realSetImmediate.js';

/**
 * Calls run in the order they were queued, at most `perTurn` of them per turn
 * of the event loop, with I/O and timers in between (setImmediate). A batch's
 * replies are counted as they arrive, but what each renewal's answer then does
 * (the Lock's new validity, the next renewal on the shared timer) is queued
 * here: when the process fell behind, the replies of many batches came in one
 * read and their answers ran in one turn of ~20-50 ms. The turns are the
 * real ones (realSetImmediate), whatever a test does with fake timers.
 */
export class SlicedCalls {
  readonly #perTurn: number;
  #calls: ((argument: unknown) => void)[] = [];
  #arguments: unknown[] = [];
  #next = 0;
  #scheduled = false;

  constructor(perTurn: number) {
    this.#perTurn = perTurn;
  }

  /** Calls waiting. */
  get size(): number {
    return this.#calls.length - this.#next;
  }

  /** Calls `call(argument)` in a later turn, after the calls queued before it. */
  queue<T>(call: (argument: T) => void, argument: T): void {
    this.#calls.push(call as (argument: unknown) => void);
    this.#arguments.push(argument);
    if (!this.#scheduled) {
      this.#scheduled = true;
      realSetImmediate(this.#run);
    }
  }

  readonly #run = (): void => {
    const end = Math.min(this.#calls.length, this.#next + this.#perTurn);
    while (this.#next < end) {
      const index = this.#next++;
      const call = this.#calls[index] as (argument: unknown) => void;
      const argument = this.#arguments[index];
      try {
        call(argument);
      } catch {
        // A call's own failure is its own: the others still run.
      }
    }
    if (this.#next < this.#calls.length) {
      realSetImmediate(this.#run);
      return;
    }
    this.#calls = [];
    this.#arguments = [];
    this.#next = 0;
    this.#scheduled = false;
  };
}
