/**
 * First-come-first-served lines of this process's waiters, one per set of
 * resources on one set of nodes. Only the head asks Redis; the others wait for
 * their turn, so 200 local waiters cost the nodes what one does.
 */
const lines = new Map<string, Place[]>();

/** Whether someone of this process already waits on `key`. */
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
  readonly #atHead: Promise<void>;
  #reachHead: () => void = () => undefined;
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
    this.#atHead = new Promise((resolve) => (this.#reachHead = resolve));
    line.push(this);
    if (line[0] === this) this.#reachHead();
  }

  /** Resolves at the head of the line, after `maxWaitMs`, or when the signal aborts. */
  turn(maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#line[0] === this) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      // An endless acquire (acquireTimeoutMs: Infinity) waits for its turn without a timer.
      const timer = Number.isFinite(maxWaitMs) ? setTimeout(done, Math.max(0, maxWaitMs)) : undefined;
      timer?.unref();
      signal?.addEventListener('abort', done, { once: true });
      void this.#atHead.then(done);
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
      next.#reachHead();
    }
  }
}
