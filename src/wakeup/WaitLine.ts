/**
 * First-come-first-served lines of this process's waiters, one per set of
 * resources on one set of nodes. Only the head asks Redis; the others wait for
 * their turn, so 200 local waiters cost the nodes what one does.
 */
const lines = new Map<string, Place[]>();

/** Whether someone of this process is in the line for `key` (trying or waiting). */
export function hasWaiters(key: string): boolean {
  return lines.has(key);
}

/** Joins the line for `key` at its tail. */
export function joinLine(key: string): Place {
  return new Place(key);
}

export class Place {
  readonly #key: string;
  readonly #line: Place[];
  /** Set by turn() while it waits; called when this place reaches the head. */
  #reachHead: (() => void) | undefined;
  #left = false;
  /**
   * Set when this place became the head because the previous head acquired
   * the lock: the resource is then held by this process, and its release will
   * be announced, so trying at once would only fail.
   */
  followsLocalHolder = false;

  constructor(key: string) {
    this.#key = key;
    let line = lines.get(key);
    if (!line) {
      line = [];
      lines.set(key, line);
    }
    this.#line = line;
    line.push(this);
  }

  /** Whether this place is at the head of its line (the one that may ask Redis). */
  get atHead(): boolean {
    return this.#line[0] === this;
  }

  /** Resolves at the head of the line, after `maxWaitMs`, or when the signal aborts. */
  turn(maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.atHead || this.#left) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#reachHead = undefined;
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      // An endless acquire (acquireTimeoutMs: Infinity) waits for its turn without a timer.
      const timer = Number.isFinite(maxWaitMs) ? setTimeout(done, Math.max(0, maxWaitMs)) : undefined;
      timer?.unref();
      signal?.addEventListener('abort', done, { once: true });
      this.#reachHead = done;
    });
  }

  /** Leaves the line (idempotent); if this was the head, the next waiter's turn begins. */
  leave(acquired = false): void {
    if (this.#left) return;
    this.#left = true;
    const index = this.#line.indexOf(this);
    this.#line.splice(index, 1);
    if (this.#line.length === 0) {
      if (lines.get(this.#key) === this.#line) lines.delete(this.#key);
    } else if (index === 0) {
      const next = this.#line[0] as Place;
      next.followsLocalHolder = acquired;
      next.#reachHead?.();
    }
  }
}
