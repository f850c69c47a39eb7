/**
 * Deletes of a value's keys (releases, undos) that timed out on one node and
 * may still run there. The attempts of one acquire share a value: the undo of
 * a failed attempt that runs after the next attempt's write would delete keys
 * that attempt counts as held. LockNode sends no write of such a value to
 * that node until the deletes have settled (run, or failed and never will).
 */
export class LateDeletes {
  /** Deletes still out, by value. */
  readonly #byValue = new Map<string, number>();

  /** A delete of `value`'s keys was given up on while it may still run. */
  track(value: string, deleting: Promise<unknown>): void {
    this.#byValue.set(value, (this.#byValue.get(value) ?? 0) + 1);
    const settled = (): void => {
      const left = (this.#byValue.get(value) ?? 1) - 1;
      if (left === 0) this.#byValue.delete(value);
      else this.#byValue.set(value, left);
    };
    deleting.then(settled, settled);
  }

  /** Whether any of `values` has a delete still out. */
  pending(values: readonly string[]): boolean {
    return values.some((value) => this.#byValue.has(value));
  }

  /** How many values have a delete outstanding. */
  get size(): number {
    return this.#byValue.size;
  }
}
