import type { Clock } from '../clock/Clock.js';
import type { ReleaseWatch } from './ReleaseWatch.js';
import { hasWaiters, joinLine, type Place } from './WaitLine.js';

/** One release watch per line, shared by its waiters (only the head waits on it). */
const lineWatches = new Map<string, { watch: ReleaseWatch; users: number }>();

function attachLineWatch(lineKey: string, open: () => ReleaseWatch): ReleaseWatch {
  let entry = lineWatches.get(lineKey);
  if (!entry) {
    entry = { watch: open(), users: 0 };
    lineWatches.set(lineKey, entry);
  }
  entry.users++;
  return entry.watch;
}

function detachLineWatch(lineKey: string): void {
  const entry = lineWatches.get(lineKey);
  if (!entry || --entry.users > 0) return;
  lineWatches.delete(lineKey);
  entry.watch.close();
}

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

  /**
   * Before the first attempt: if others of this process already wait, waits
   * for our turn behind them; if the one before us took the lock, also waits
   * (up to `firstDelayMs`) for its release to be announced.
   */
  async queueBehindOthers(firstDelayMs: number): Promise<void> {
    if (!hasWaiters(this.#lineKey)) return;
    const watch = await this.#takePlace();
    if (this.#place?.followsLocalHolder) await watch.wait(firstDelayMs, this.#signal);
  }

  /** Right before each attempt: releases seen so far no longer count. */
  beforeAttempt(): void {
    this.#watch?.beforeAttempt();
  }

  /** Between attempts (a retry pause): `delayMs` is the backoff. */
  readonly pause = async (delayMs: number): Promise<void> => {
    const watch = this.#watch ?? (await this.#takePlace());
    if (!watch.opened) {
      await watch.open();
      // Try again as soon as we listen: a release may have come just before.
      return;
    }
    return watch.wait(delayMs, this.#signal);
  };

  /** Leaves the line; `acquired` tells the next waiter the lock is now held here. */
  close(acquired: boolean): void {
    this.#place?.leave(acquired);
    if (this.#watch) detachLineWatch(this.#lineKey);
  }

  async #takePlace(): Promise<ReleaseWatch> {
    this.#place = joinLine(this.#lineKey);
    this.#watch = attachLineWatch(this.#lineKey, this.#openWatch);
    await this.#place.turn(this.#deadline - this.#clock.now(), this.#signal);
    return this.#watch;
  }
}
