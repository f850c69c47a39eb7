import type { Clock } from '../clock/Clock.js';

interface Tracked {
  readonly onExpire: () => void;
  done: boolean;
}

/**
 * The time a group of requests sent together (one to each node of a vote)
 * has to answer. One timer serves the whole group, not one per request: on
 * five nodes the timers and clock reads were the largest share of
 * quorumlock's own CPU time in an uncontended lock cycle.
 */
export class RequestDeadline {
  /** When the group was sent, on the clock given. */
  readonly sentAt: number;
  readonly timeoutMs: number;
  readonly #clock: Clock;
  #tracked: Tracked[] = [];
  #open = 0;
  #timer: NodeJS.Timeout | undefined;
  #armed = false;

  constructor(clock: Clock, timeoutMs: number) {
    this.#clock = clock;
    this.sentAt = clock.now();
    this.timeoutMs = timeoutMs;
  }

  /**
   * Registers a request just sent; `onExpire` runs if the deadline passes
   * before the request calls the function returned (at most one of the two
   * takes effect).
   */
  track(onExpire: () => void): () => void {
    const entry: Tracked = { onExpire, done: false };
    this.#tracked.push(entry);
    this.#open++;
    if (this.#timer === undefined) {
      // Requests are normally tracked as they are sent, right after the
      // deadline was made; a late one still gets only the time left.
      const delay = this.#armed ? Math.max(0, this.sentAt + this.timeoutMs - this.#clock.now()) : this.timeoutMs;
      this.#armed = true;
      this.#timer = setTimeout(() => this.#expire(), delay);
      this.#timer.unref();
    }
    return () => {
      if (entry.done) return;
      entry.done = true;
      if (--this.#open === 0) this.#stop();
    };
  }

  #expire(): void {
    this.#timer = undefined;
    const tracked = this.#tracked;
    this.#tracked = [];
    for (const entry of tracked) {
      if (entry.done) continue;
      entry.done = true;
      this.#open--;
      entry.onExpire();
    }
  }

  #stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#tracked = [];
  }
}
