import type { Clock } from '../clock/Clock.js';
import type { ReleaseWatch } from './ReleaseWatch.js';
import { hasWaiters, joinLine, type Place } from './WaitLine.js';

/**
 * How one acquire call waits once the resource turns out to be held: it takes
 * its place in this process's line (behind earlier local waiters), and from
 * then on sleeps between attempts until a release is announced or its backoff
 * delay passes. Nothing is set up while attempts succeed.
 */
export class ContendedWait {
  readonly #lineKey: string;
  readonly #deadline: number;
  readonly #clock: Clock;
  readonly #signal: AbortSignal | undefined;
  readonly #openWatch: () => ReleaseWatch;
  #place: Place | undefined;
  #watch: ReleaseWatch | undefined;

  constructor(lineKey: string, deadline: number, clock: Clock, signal: AbortSignal | undefined, openWatch: () => ReleaseWatch) {
    this.#lineKey = lineKey;
    this.#deadline = deadline;
    this.#clock = clock;
    this.#signal = signal;
    this.#openWatch = openWatch;
  }

  /** Before the first attempt: if others of this process already wait, wait for our turn behind them. */
  async queueBehindOthers(): Promise<void> {
    if (hasWaiters(this.#lineKey)) await this.#takePlace();
  }

  /** Right before each attempt: releases seen so far no longer count. */
  beforeAttempt(): void {
    this.#watch?.beforeAttempt();
  }

  /** Between attempts (a retry pause): `delayMs` is the backoff. */
  readonly pause = async (delayMs: number): Promise<void> => {
    if (!this.#place) await this.#takePlace();
    if (!this.#watch) {
      this.#watch = this.#openWatch();
      // Try again as soon as we listen: a release may have come just before.
      return this.#watch.open();
    }
    return this.#watch.wait(delayMs, this.#signal);
  };

  close(): void {
    this.#watch?.close();
    this.#place?.leave();
  }

  async #takePlace(): Promise<void> {
    this.#place = joinLine(this.#lineKey);
    await this.#place.turn(this.#deadline - this.#clock.now(), this.#signal);
  }
}
