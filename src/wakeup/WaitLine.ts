import { sleep } from '../shared/sleep.js';
import type { Claim } from '../shared/claim.js';
import type { WritesOut } from '../shared/grant.js';
import type { ReleaseWatch } from './ReleaseWatch.js';

/**
 * First-come-first-served lines of this process's waiters, one per set of
 * resources on one set of nodes. Only the head asks Redis; the others wait for
 * their turn, so 200 local waiters cost the nodes what one does.
 */
export class LineSpace {
  /** By resources key (see lineKey): a line, or a caller alone at its head. */
  readonly lines = new Map<string, Line | LoneHead>();

  /** Whether someone of this process is in the line for `key` (trying or waiting). */
  hasWaiters(key: string): boolean {
    return this.lines.has(key);
  }
}

/**
 * One space per set of nodes, shared by every locker on those nodes. Lines
 * are looked up in two steps (nodes, then resources) so that an acquire never
 * builds and hashes one long key naming every node: that was a visible share
 * of an uncontended acquire on five nodes.
 */
const spaces = new Map<string, LineSpace>();

/** The space of the nodes named `nodes`: the same object for every locker on them. */
export function lineSpaceFor(nodes: string): LineSpace {
  let space = spaces.get(nodes);
  if (!space) {
    space = new LineSpace();
    spaces.set(nodes, space);
  }
  return space;
}

/** The line key of a set of resources (one resource: the resource itself, no new string). */
export function lineKey(keys: readonly string[]): string {
  return keys.length === 1 ? (keys[0] as string) : keys.join('\u0000');
}

/** One line: its places, head first, and the release watch its waiters share (only the head waits on it). */
export class Line {
  readonly places: Place[] = [];
  watch: ReleaseWatch | undefined;
  watchUsers = 0;
  /**
   * How many more times the lock may pass from holder to holder inside this
   * process before it goes back through the nodes: the waiters that were
   * already in line when it last came from them. Later arrivals wait for the
   * next round, so waiters of other processes, who may have come first, are
   * never held back by more than one round of ours.
   */
  passesLeft = 0;
  /**
   * Whether the lock last came from the nodes as a handoff from the Redis
   * wait lines: waiters of other processes stood in line then, and the
   * release that ends this round hands them the key (see
   * LocalTaker.holderReleasing).
   */
  handedOff = false;
}

/** A lock passed from a holder of this process to the next waiter, keys and all. */
export interface LocalHandover {
  readonly value: string;
  /** The giver's validity, which the taker keeps: the keys on the nodes are unchanged. */
  readonly validUntil: number;
  /** The giver's claim of its full TTL, if still out (a handed-off lock's, see Grant.claim): the taker follows it. */
  readonly claim?: Claim | undefined;
  /** The giver's acquire writes still out (Grant.writesOut): the taker's release follows them. */
  readonly writesOut?: WritesOut | undefined;
  /** The keys the giver holds, where a primitive took others than those asked for (a semaphore's slots, Grant.keys). */
  readonly keys?: readonly string[] | undefined;
  /** How many more times the lock may pass inside this process (see Line.passesLeft), where no line counts it. */
  readonly passesLeft?: number | undefined;
}

/** The waiter behind a place, as a releasing holder of the same process sees it. */
export interface LocalTaker {
  /** The locker it acquires through: a lock passes only within one locker (its settings, its clock). */
  readonly owner: object;
  readonly ttlMs: number;
  /** Takes the lock; false when the waiter cannot take it now (an attempt of its own is out, or it gave up). */
  offer(handover: LocalHandover): boolean;
  /**
   * The holder ahead releases through the nodes instead: the waiter's next
   * attempt may go at once, since it leaves on each connection after that
   * release. `yielded`: the holder ends a round that came as a handoff from
   * the Redis lines (Line.passesLeft, Line.handedOff), so its release
   * hands the key to the next waiter there, of another process: an attempt
   * now would only fail.
   */
  holderReleasing(yielded: boolean): void;
}

/**
 * A caller alone at the head of its line, the uncontended case: no line is
 * built for it (a line, a place and its bookkeeping were a tenth of an
 * uncontended acquire on one node, most of it in code run cold). Whoever
 * joins next has it build the line, with itself at the head.
 */
export interface LoneHead {
  formLine(): Line;
}

/** Stands alone at the head of the line for `key`; false when someone is there already. */
export function standAlone(space: LineSpace, key: string, head: LoneHead): boolean {
  if (space.lines.has(key)) return false;
  space.lines.set(key, head);
  return true;
}

/** A lone head leaves (idempotent; nothing if it has formed a line since). */
export function leaveAlone(space: LineSpace, key: string, head: LoneHead): void {
  if (space.lines.get(key) === head) space.lines.delete(key);
}

/** Joins the line for `key` in `space` at its tail. */
export function joinLine(space: LineSpace, key: string): Place {
  const found = space.lines.get(key);
  let line: Line;
  if (found === undefined) {
    line = new Line();
    space.lines.set(key, line);
  } else {
    line = found instanceof Line ? found : found.formLine();
  }
  return new Place(space, key, line);
}

export class Place {
  readonly #space: LineSpace;
  readonly #key: string;
  readonly line: Line;
  /** Set by turn() while it waits; called when this place reaches the head. */
  #reachHead: (() => void) | undefined;
  #left = false;
  /**
   * Set when this place became the head because the previous head acquired
   * the lock: the resource is then held by this process, and its release will
   * be announced, so trying at once would only fail.
   */
  followsLocalHolder = false;
  /** Who waits here, for a holder of this process to pass the lock to. */
  taker: LocalTaker | undefined;

  constructor(space: LineSpace, key: string, line: Line) {
    this.#space = space;
    this.#key = key;
    this.line = line;
    line.places.push(this);
  }

  /** Whether this place is at the head of its line (the one that may ask Redis). */
  get atHead(): boolean {
    return this.line.places[0] === this;
  }

  /** Resolves at the head of the line, after `maxWaitMs`, or when the signal aborts. */
  turn(maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.atHead || this.#left) return Promise.resolve();
    // An endless acquire (acquireTimeoutMs: Infinity) waits for its turn without a timer.
    return sleep(maxWaitMs, signal, (end) => {
      this.#reachHead = end;
    });
  }

  /** Leaves the line (idempotent); if this was the head, the next waiter's turn begins. */
  leave(acquired = false): void {
    if (this.#left) return;
    this.#left = true;
    const places = this.line.places;
    if (places.length === 1) {
      // Alone in the line, the uncontended case: no array surgery (splice
      // allocates the array of what it removed).
      places.length = 0;
      if (this.#space.lines.get(this.#key) === this.line) this.#space.lines.delete(this.#key);
      return;
    }
    const index = places.indexOf(this);
    if (index !== 0) {
      places.splice(index, 1);
      return;
    }
    places.shift();
    const next = places[0] as Place;
    next.followsLocalHolder = acquired;
    next.#reachHead?.();
  }
}
