import type { Clock } from '../clock/Clock.js';
import { afterArrivedReplies } from './afterArrivedReplies.js';

/** A deadline as the queue sees it. */
export interface QueuedDeadline {
  readonly expiresAt: number;
  /** At the head of the queue: expires the deadline if `now` is past it; true once it can leave the queue. */
  settleAt(now: number): boolean;
}

/**
 * One timer for the request deadlines of one locker that last its node
 * timeout. Deadlines of one length expire in the order they were made, so a
 * queue in that order needs a single timer, armed for the oldest: a deadline
 * whose requests all answered stays queued until it reaches the head, where
 * it is dropped. A Node timer made and cleared per vote was, after the
 * promises, the largest share of quorumlock's own time in an uncontended
 * cycle. The timer runs on whatever setTimeout is installed when it is armed
 * (fake timers in tests), and is unref'd: it never keeps a process alive.
 */
export class DeadlineQueue {
  readonly timeoutMs: number;
  readonly #clock: Clock;
  #queue: QueuedDeadline[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(clock: Clock, timeoutMs: number) {
    this.#clock = clock;
    this.timeoutMs = timeoutMs;
  }

  /** Queues a deadline made just now (so none queued before it expires later). */
  add(deadline: QueuedDeadline): void {
    this.#queue.push(deadline);
    // Made just now: its whole length is left, no clock read needed.
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => {
      // Only the deadlines queued by now are judged after the replies are read (afterArrivedReplies).
      const queued = this.#queue.length;
      afterArrivedReplies(() => this.#fire(queued));
    }, Math.max(0, Math.ceil(delayMs)));
    this.#timer.unref();
  }

  /**
   * Settles the deadlines due, up to the `queued` first: those queued before
   * the timer fired. One queued after it (in a callback of the poll phase
   * that followed) has requests the loop has not looked for replies to
   * since they were sent: after a long turn of that callback, its node timed
   * out though the replies came in during the turn (a renewal batch sent just
   * before a 200 ms turn, in the renewals test). It waits for the next timer.
   */
  #fire(queued: number): void {
    this.#timer = undefined;
    const queue = this.#queue;
    let head = this.#head;
    const now = this.#clock.now();
    while (head < queued && head < queue.length && (queue[head] as QueuedDeadline).settleAt(now)) head++;
    if (head === queue.length) {
      this.#queue = [];
      this.#head = 0;
      return;
    }
    if (head > 1024 && head > queue.length / 2) {
      this.#queue = queue.slice(head);
      head = 0;
    }
    this.#head = head;
    this.#arm((this.#queue[head] as QueuedDeadline).expiresAt - now);
  }
}
