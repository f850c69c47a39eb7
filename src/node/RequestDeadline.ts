import type { Clock } from '../clock/Clock.js';
import { afterArrivedReplies } from './afterArrivedReplies.js';
import type { DeadlineQueue, QueuedDeadline } from './DeadlineQueue.js';

/**
 * How long an acquire may wait for a node's first connection: until the
 * call's own deadline (on the same clock) or its signal, not the node
 * timeout. The request's own timeout starts once it is sent.
 */
export interface ConnectWait {
  readonly until: number;
  readonly signal: AbortSignal | undefined;
}

interface Tracked {
  readonly onExpire: () => void;
  done: boolean;
}

/**
 * The time a group of requests sent together (one to each node of a vote)
 * has to answer. One timer serves the whole group, not one per request: on
 * five nodes the timers and clock reads were the largest share of
 * quorumlock's own CPU time in an uncontended lock cycle. With a queue of
 * the same length (the locker's), not even that: the queue's one timer
 * serves every group.
 */
export class RequestDeadline implements QueuedDeadline {
  /** When the group was sent, on the clock given. */
  readonly sentAt: number;
  readonly timeoutMs: number;
  /** Set for acquire attempts; other requests give a connecting node their usual timeout. */
  readonly connectWait: ConnectWait | undefined;
  readonly #clock: Clock;
  readonly #queue: DeadlineQueue | undefined;
  #tracked: Tracked[] = [];
  #open = 0;
  #timer: NodeJS.Timeout | undefined;
  #armed = false;
  #queued = false;

  constructor(clock: Clock, timeoutMs: number, queue?: DeadlineQueue, connectWait?: ConnectWait) {
    this.#clock = clock;
    this.sentAt = clock.now();
    this.timeoutMs = timeoutMs;
    this.connectWait = connectWait;
    this.#queue = queue?.timeoutMs === timeoutMs ? queue : undefined;
  }

  get expiresAt(): number {
    return this.sentAt + this.timeoutMs;
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
    if (!this.#armed) {
      this.#armed = true;
      if (this.#queue) {
        this.#queued = true;
        this.#queue.add(this);
      } else {
        this.#startTimer(this.timeoutMs);
      }
    } else if (this.#timer === undefined && !this.#queued) {
      // Requests are normally tracked as they are sent, right after the
      // deadline was made; a late one still gets only the time left.
      this.#startTimer(Math.max(0, this.expiresAt - this.#clock.now()));
    }
    return () => {
      if (entry.done) return;
      entry.done = true;
      if (--this.#open === 0) this.#stop();
    };
  }

  settleAt(now: number): boolean {
    if (this.#open > 0 && now < this.expiresAt) return false;
    this.#queued = false;
    if (this.#open > 0) this.#expire();
    return true;
  }

  #startTimer(delayMs: number): void {
    this.#timer = setTimeout(() => afterArrivedReplies(() => this.#expire()), delayMs);
    this.#timer.unref();
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
    // A queued deadline has no timer of its own: no call into the timers module.
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#tracked.length = 0;
  }
}
