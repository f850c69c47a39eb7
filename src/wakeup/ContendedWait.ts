import type { Clock } from '../clock/Clock.js';
import { type BackoffPolicy, fullJitterDelay } from '../shared/backoff.js';
import { ValidityExhaustedError } from '../shared/errors.js';
import { sleep } from '../shared/sleep.js';
import type { HandedReservation } from './handoffGrant.js';
import { LinePosition } from './LinePosition.js';
import type { ReleaseWatch } from './ReleaseWatch.js';
import {
  joinLine,
  leaveAlone,
  Line,
  type LineSpace,
  type LocalHandover,
  type LocalTaker,
  type LoneHead,
  Place,
  standAlone,
} from './WaitLine.js';

/** What a wait needs from its locker: ears for releases, and a keepalive for its places in the Redis lines. */
export interface WaitHooks {
  openWatch(keys: readonly string[]): ReleaseWatch;
  keepPlace(keys: readonly string[], value: string, position: LinePosition): () => void;
  /** The line of this process a waiter for `keys` joins (see LineSpace); undefined where waiters may enter together, each then keeping a line of its own, by its value, only once it needs one (formLine). */
  localLine(keys: readonly string[]): string | undefined;
  /** How long a waiter in the Redis lines waits for its turn's announcement before it tries anyway, given the longest backoff delay. */
  lineFallbackMs(maxDelayMs: number): number;
}

/** What a wait aborts on (lock/AcquireSignal.ts): `aborted` is read without making the signal. */
export interface WaitSignals {
  readonly signal: AbortSignal | undefined;
  readonly aborted: boolean;
}

/**
 * How one acquire call waits its turn: it takes its place in this process's
 * line before its first attempt, so of many local callers arriving together
 * only the first asks Redis; once the resource turns out to be held, it
 * listens for releases and from then on attempts from the wait lines the
 * nodes keep (first come, first served across processes, with the freed key
 * handed straight to the first waiter), sleeping between attempts until a
 * release for it is announced or its backoff delay passes. No release watch
 * is opened while attempts succeed.
 */
export class ContendedWait implements LoneHead, LocalTaker {
  readonly #space: LineSpace;
  readonly #lineKey: string;
  /** Whether waiters of this process for these keys line up (WaitHooks.localLine). */
  readonly #linesUp: boolean;
  readonly #deadline: number;
  readonly #clock: Clock;
  /** Read when a wait begins: the acquire makes its signal only once it waits (lock/AcquireSignal.ts). */
  readonly #signals: WaitSignals;
  readonly #keys: readonly string[];
  readonly #value: string;
  readonly #hooks: WaitHooks;
  #place: Place | undefined;
  #watch: ReleaseWatch | undefined;
  /** Set once attempts go to the Redis wait lines (see position). */
  #position: LinePosition | undefined;
  #stopKeeping: (() => void) | undefined;
  /** The place the attempt going out uses (see position). */
  #attemptPosition: LinePosition | undefined;
  /** Whether the last wait ended with a release announcement. */
  #woken = false;
  /** The longest backoff delay (retry.maxDelayMs). */
  #maxDelayMs = 0;
  /** Set while an attempt of ours is out: a lock passed to us then could be doubled by its grant. */
  #attemptOut = false;
  #closed = false;
  /** A lock a holder of this process passed to us, until the next attempt takes it. */
  #handover: LocalHandover | undefined;
  /** Set when the holder of this process ahead of us released through the nodes: attempt now. */
  #holderReleased = false;
  /** Set with #holderReleased when that holder yielded to the Redis lines (see LocalTaker.holderReleasing). */
  #holderYielded = false;
  /** Whether we took the lock as a handoff from the Redis lines (acceptHandoff). */
  #handedOff = false;
  /** Ends a wait behind a holder of this process (see #park). */
  #unpark: (() => void) | undefined;

  constructor(
    space: LineSpace,
    keys: readonly string[],
    value: string,
    deadline: number,
    clock: Clock,
    signals: WaitSignals,
    hooks: WaitHooks,
    readonly owner: object,
    readonly ttlMs: number,
  ) {
    this.#space = space;
    this.#keys = keys;
    this.#value = value;
    this.#hooks = hooks;
    const local = hooks.localLine(keys);
    this.#linesUp = local !== undefined;
    this.#lineKey = local ?? value;
    this.#deadline = deadline;
    this.#clock = clock;
    this.#signals = signals;
  }

  /**
   * Before the first attempt: joins the line. Returns undefined when we are
   * first (the usual, uncontended case: nothing to wait for). Otherwise the
   * promise resolves when our turn comes; if the one before us took the lock,
   * after also waiting (up to the longest backoff delay) for its release.
   */
  queueBehindOthers(retry: BackoffPolicy): Promise<void> | undefined {
    this.#maxDelayMs = retry.maxDelayMs;
    // Waiters that may enter together need no entry in the shared map: a Map write and delete of a fresh string, each acquire.
    if (!this.#linesUp) return undefined;
    if (standAlone(this.#space, this.#lineKey, this)) return undefined;
    const place = joinLine(this.#space, this.#lineKey);
    place.taker = this;
    this.#place = place;
    if (place.atHead) return undefined;
    return this.#waitForTurn(place, retry);
  }

  /**
   * Before the first attempt, where waiters of this process pass their locks
   * to one another without lining up (LockManager.passesToWaiting): waits up
   * to `ms` for a holder of this process to pass us its lock, as a waiter
   * behind a local holder does. Others of this process already wait in the
   * nodes' lines; an attempt of ours now would only join them there.
   */
  waitForPass(ms: number): Promise<void> {
    return this.#park(ms);
  }

  /** @internal Builds our line, with us at its head: someone joins us, or we need its shared watch. */
  formLine(): Line {
    const line = new Line();
    this.#space.lines.set(this.#lineKey, line);
    this.#place = new Place(this.#space, this.#lineKey, line);
    this.#place.taker = this;
    return line;
  }

  /**
   * Our place in the Redis wait lines, for the attempt going out; undefined
   * when it should be a plain attempt: the first one (usually granted); any
   * before we listen, since a handoff announced to us then would be lost; and
   * one right after a release freed the key with nobody in the Redis line
   * (this process's own holder's, usually), which a plain SET NX takes for a
   * third of the script's cost.
   */
  get position(): LinePosition | undefined {
    return this.#attemptPosition;
  }

  /** Our place in the Redis lines, if we ever took one: to leave it. */
  get linePosition(): LinePosition | undefined {
    return this.#position;
  }

  /** @internal A holder of this process passes us its lock (see LocalTaker). */
  offer(handover: LocalHandover): boolean {
    if (this.#attemptOut || this.#closed || this.#handover || this.#signals.aborted) return false;
    this.#handover = handover;
    this.#unpark?.();
    this.#watch?.interrupt();
    return true;
  }

  /** @internal See LocalTaker.holderReleasing. */
  holderReleasing(yielded: boolean): void {
    if (this.#attemptOut || this.#closed) return;
    this.#holderReleased = true;
    this.#holderYielded = yielded;
    this.#unpark?.();
    this.#watch?.interrupt();
  }

  /** The lock passed to us, if any: the next attempt takes it instead of asking the nodes. */
  takeHandover(): LocalHandover | undefined {
    const handover = this.#handover;
    this.#handover = undefined;
    return handover;
  }

  /**
   * The reservation a quorum of nodes handed us at a release, announced after
   * our last attempt's replies (see handoffGrant.ts), with our place in the
   * lines: the lock is ours if acceptHandoff() follows. Nothing while an
   * attempt is out, which takes the key itself.
   */
  peekHandoff(): { readonly reservation: HandedReservation; readonly position: LinePosition } | undefined {
    const watch = this.#watch;
    const position = this.#position;
    if (!watch || !position?.inLine || this.#attemptOut || this.#closed) return undefined;
    const reservation = watch.handedReservation(position.waitingSince);
    return reservation && { reservation, position };
  }

  /**
   * We take the handoff peekHandoff() found: the announcements are spent, and
   * our place is the claim's now (the claim that follows leaves the lines),
   * so close() has nothing to leave.
   */
  acceptHandoff(): void {
    this.#attemptOut = true;
    this.#handedOff = true;
    this.#watch?.beforeAttempt();
    this.#position = undefined;
  }

  /** Right before each attempt: releases seen so far no longer count. */
  beforeAttempt(): void {
    this.#attemptOut = true;
    this.#holderReleased = false;
    this.#holderYielded = false;
    const watch = this.#watch;
    const woken = this.#woken;
    this.#woken = false;
    this.#attemptPosition = undefined;
    // The watch is the line's, and its head's to reset: one behind the head
    // makes a last plain attempt when its time in line ran out.
    if (!watch || (this.#place !== undefined && !this.#place.atHead)) return;
    watch.beforeAttempt();
    if (!watch.listening) return;
    const inLine = this.#position?.inLine === true;
    if (!woken || inLine) {
      this.#position ??= new LinePosition();
      this.#attemptPosition = this.#position;
    }
    // An attempt from the Redis lines takes (or keeps) a place there: from
    // now on a release handed to another waiter is not ours to try, and one
    // handed to us (even while the attempt is out) is.
    watch.expected = this.#attemptPosition ? this.#value : undefined;
  }

  /** Between attempts (a retry pause): `delayMs` is the backoff, `error` why the last attempt failed. */
  async pause(delayMs: number, _attemptNumber?: number, error?: unknown): Promise<void> {
    this.#attemptOut = false;
    if (this.#handover || this.#holderReleased) return;
    if (error instanceof ValidityExhaustedError) {
      await this.#backOff(delayMs);
      return;
    }
    const watch = this.#watch ?? this.#attachWatch();
    if (!watch.listening) {
      // Listen, then try again at once (a release may also have come just
      // before), from the wait lines this time.
      await watch.open();
      return;
    }
    const position = this.#position;
    let waitMs = delayMs;
    if (position?.inLine) {
      // Releases handed to others while our attempt was out were heard as
      // news when we had no place yet; now only a handoff to us is.
      if (watch.handedElsewhere) watch.beforeAttempt();
      watch.expected = this.#value;
      if (!this.#stopKeeping) this.#stopKeeping = this.#hooks.keepPlace(this.#keys, this.#value, position);
      // In line, our turn is announced to us; polling is only the fallback for
      // a lost message or a dead waiter ahead, whose cost the longest delay bounds.
      waitMs = Math.max(delayMs, Math.min(this.#hooks.lineFallbackMs(this.#maxDelayMs), this.#deadline - this.#clock.now()));
    }
    if (this.#handover || this.#holderReleased) return;
    await watch.wait(waitMs, this.#signals.signal);
    this.#woken = watch.releaseSeen && !watch.handedElsewhere;
  }

  /** Leaves the line; `acquired` tells the next waiter the lock is now held here. */
  close(acquired: boolean, passed: boolean): void {
    this.#closed = true;
    this.#stopKeeping?.();
    const place = this.#place;
    if (!place) {
      if (this.#linesUp) leaveAlone(this.#space, this.#lineKey, this);
      return;
    }
    place.leave(acquired);
    // A lock that came from the nodes may pass to those who were waiting for it.
    if (acquired && !passed) {
      place.line.passesLeft = place.line.places.length;
      place.line.handedOff = this.#handedOff;
    }
    if (!this.#watch) return;
    // The line's last watcher closes the watch the line shared.
    const line = place.line;
    if (--line.watchUsers > 0) return;
    line.watch = undefined;
    this.#watch.close();
  }

  async #waitForTurn(place: Place, retry: BackoffPolicy): Promise<void> {
    // Listen while in line, so the release that ends the holder's turn is heard.
    const watch = this.#attachWatch();
    const opening = watch.open();
    await place.turn(this.#deadline - this.#clock.now(), this.#signals.signal);
    // Behind a holder of this process, only a release after it acquired
    // counts; those announced so far came before (on several nodes, the
    // slower nodes' announcements of the previous release arrive late, and
    // with them one announcement of the next would look like a quorum). It
    // cannot have released yet: we resume in the microtask after its turn.
    if (place.followsLocalHolder) watch.beforeAttempt();
    // The watch was the previous head's: a handoff to any waiter is news to
    // us, who have no place in the Redis lines yet.
    watch.expected = undefined;
    // Behind a holder of this process we hear of its release from it: a
    // pass, or holderReleasing. Announcements are not for us then: they are
    // late ones of the release before, which only made us try too early. Nor
    // do we wait for the subscriptions: at a process's first contention they
    // took 20-40 ms to confirm on five nodes, and a lock passed to us meanwhile
    // sat unused (pause() waits for them if our own attempt fails).
    if (place.followsLocalHolder) {
      if (!this.#handover && !this.#holderReleased) await this.#park(retry.maxDelayMs);
    } else {
      await opening;
    }
    // Freed by our own process, the key is usually free: a plain attempt takes it.
    this.#woken = this.#holderReleased;
    if (this.#holderYielded && watch.listening) await this.#yieldToLine(watch, retry);
  }

  /**
   * Our holder ended a round that came from the Redis lines: its release
   * hands the key to the next waiter there, of another process, and a plain
   * attempt now would fail, then join the lines a backoff later. Instead we
   * wait that backoff without the attempt, and join the lines then; if the
   * release is announced meanwhile (nobody was left in line: the key is
   * free), a plain attempt takes it at once. An attempt from the lines right
   * after the release costs the same request, but at the handoff: on two
   * cores, the woken process then started its hold 0.1-0.2 ms later.
   */
  async #yieldToLine(watch: ReleaseWatch, retry: BackoffPolicy): Promise<void> {
    const backoffMs = fullJitterDelay(1, retry);
    await watch.wait(Math.min(backoffMs, this.#deadline - this.#clock.now()), this.#signals.signal);
    this.#woken = watch.releaseSeen && !watch.handedElsewhere;
  }

  /**
   * After an attempt that took the keys too slowly to leave any validity:
   * the full backoff delay, whatever the nodes announce meanwhile. Our undo
   * may hand a key back to us, or another release free it, but retrying at
   * once runs the same round trips against the same TTL; woken so, a waiter
   * whose TTL or round trips cannot give validity retried without pause,
   * thousands of times a second. Only a lock a holder of this process passes
   * us (which keeps its own validity) or its release ends the wait sooner.
   * The next attempt is from the Redis lines again, if we had a place there.
   */
  async #backOff(delayMs: number): Promise<void> {
    await sleep(Math.min(delayMs, this.#deadline - this.#clock.now()), this.#signals.signal, (end) => {
      this.#unpark = end;
    });
    this.#woken = false;
  }

  /** Waits up to `ms` for the holder of this process ahead of us, or the signal. */
  #park(ms: number): Promise<void> {
    return sleep(Math.min(ms, this.#deadline - this.#clock.now()), this.#signals.signal, (end) => {
      this.#unpark = end;
    });
  }

  #attachWatch(): ReleaseWatch {
    const line = this.#place?.line ?? this.formLine();
    line.watch ??= this.#hooks.openWatch(this.#keys);
    line.watchUsers++;
    this.#watch = line.watch;
    return this.#watch;
  }
}
