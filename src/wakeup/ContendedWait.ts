import type { Clock } from '../clock/Clock.js';
import type { ReleaseWatch } from './ReleaseWatch.js';
import { joinLine, leaveAlone, Line, type LineSpace, lineKey, type LoneHead, Place, standAlone } from './WaitLine.js';

/**
 * How one acquire call waits its turn: it takes its place in this process's
 * line before its first attempt, so of many local callers arriving together
 * only the first asks Redis; once the resource turns out to be held, it
 * sleeps between attempts until a release is announced or its backoff delay
 * passes. No release watch is opened while attempts succeed.
 */
export class ContendedWait implements LoneHead {
  readonly #space: LineSpace;
  readonly #lineKey: string;
  readonly #deadline: number;
  readonly #clock: Clock;
  readonly #signal: AbortSignal | undefined;
  readonly #keys: readonly string[];
  readonly #openWatch: (keys: readonly string[]) => ReleaseWatch;
  #place: Place | undefined;
  #watch: ReleaseWatch | undefined;
  /** Whether the current attempt marks what it finds held (see marking). */
  #marking = false;
  /** Whether the last wait ended with a release announcement. */
  #woken = false;

  constructor(
    space: LineSpace,
    keys: readonly string[],
    deadline: number,
    clock: Clock,
    signal: AbortSignal | undefined,
    openWatch: (keys: readonly string[]) => ReleaseWatch,
  ) {
    this.#space = space;
    this.#keys = keys;
    this.#lineKey = lineKey(keys);
    this.#deadline = deadline;
    this.#clock = clock;
    this.#signal = signal;
    this.#openWatch = openWatch;
  }

  /**
   * Before the first attempt: joins the line. Returns undefined when we are
   * first (the usual, uncontended case: nothing to wait for). Otherwise the
   * promise resolves when our turn comes; if the one before us took the lock,
   * after also waiting (up to `firstDelayMs`) for its release to be announced.
   */
  queueBehindOthers(firstDelayMs: number): Promise<void> | undefined {
    if (standAlone(this.#space, this.#lineKey, this)) return undefined;
    const place = joinLine(this.#space, this.#lineKey);
    this.#place = place;
    if (place.atHead) return undefined;
    return this.#waitForTurn(place, firstDelayMs);
  }

  /** @internal Builds our line, with us at its head: someone joins us, or we need its shared watch. */
  formLine(): Line {
    const line = new Line();
    this.#space.lines.set(this.#lineKey, line);
    this.#place = new Place(this.#space, this.#lineKey, line);
    return line;
  }

  /**
   * Whether the attempt going out marks the keys it finds held, so that their
   * release is announced (a holder announces only releases somebody waits
   * for). Only an attempt made while we listen may wait for the announcement
   * afterwards. One made just after an announcement goes unmarked: it is
   * likely to succeed, and a plain SET NX is a third of the script's cost.
   */
  get marking(): boolean {
    return this.#marking;
  }

  /** Right before each attempt: releases seen so far no longer count. */
  beforeAttempt(): void {
    this.#watch?.beforeAttempt();
    this.#marking = this.#watch?.listening === true && !this.#woken;
    this.#woken = false;
  }

  /** Between attempts (a retry pause): `delayMs` is the backoff. */
  async pause(delayMs: number): Promise<void> {
    const watch = this.#watch ?? this.#attachWatch();
    if (!this.#marking) {
      // Nothing tells the holder we wait: listen, then try again at once
      // (a release may also have come just before), marking this time.
      await watch.open();
      return;
    }
    await watch.wait(delayMs, this.#signal);
    this.#woken = watch.releaseSeen;
  }

  /** Leaves the line; `acquired` tells the next waiter the lock is now held here. */
  close(acquired: boolean): void {
    const place = this.#place;
    if (!place) {
      leaveAlone(this.#space, this.#lineKey, this);
      return;
    }
    place.leave(acquired);
    if (!this.#watch) return;
    // The line's last watcher closes the watch the line shared.
    const line = place.line;
    if (--line.watchUsers > 0) return;
    line.watch = undefined;
    this.#watch.close();
  }

  async #waitForTurn(place: Place, firstDelayMs: number): Promise<void> {
    // Listen while in line, so the release that ends the holder's turn is heard.
    const watch = this.#attachWatch();
    const wasListening = watch.opened;
    const opening = watch.open();
    await place.turn(this.#deadline - this.#clock.now(), this.#signal);
    // Behind a holder of this process, only a release after it acquired
    // counts; those announced so far came before (on several nodes, the
    // slower nodes' announcements of the previous release arrive late, and
    // with them one announcement of the next would look like a quorum). It
    // cannot have released yet: we resume in the microtask after its turn.
    if (place.followsLocalHolder) watch.beforeAttempt();
    await opening;
    // A release announced before we listened was missed: only an attempt tells.
    if (place.followsLocalHolder && wasListening) {
      await watch.wait(firstDelayMs, this.#signal);
      this.#woken = watch.releaseSeen;
    }
  }

  #attachWatch(): ReleaseWatch {
    const line = this.#place?.line ?? this.formLine();
    line.watch ??= this.#openWatch(this.#keys);
    line.watchUsers++;
    this.#watch = line.watch;
    return this.#watch;
  }
}
