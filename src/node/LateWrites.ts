/** How often a release that must follow a late write is tried, and how far apart. */
const RELEASE_TRIES = 5;
const RELEASE_RETRY_MS = 200;

interface Unsettled {
  /** Writes of the lock's value whose outcome was given up on and that have not settled. */
  pending: number;
  /** Set once the lock is released: sends the release again. */
  release: (() => Promise<unknown>) | undefined;
  /** Undos of an acquire that ended without a lock of this value: each is sent again after every late write. */
  abandoned: (() => Promise<unknown>)[] | undefined;
}

/**
 * A request whose outcome was given up on (a timeout) may still run: later on
 * the same connection, or after a reconnect, when ioredis resends the
 * commands that had no answer (after a Sentinel failover, on the new
 * master). A release sent meanwhile may not follow it: ioredis resends the
 * unanswered commands of the old connection first, and a release still in
 * its offline queue may be dropped after `maxRetriesPerRequest` reconnects
 * while the write is kept. So the release of a lock with such a write is
 * sent again once the write's own promise settles: it has then run, or will
 * never run, and a release sent now runs after it.
 */
export class LateWrites {
  readonly #byValue = new Map<string, Unsettled>();

  /** `onIdle`: called when the last late write settles. */
  constructor(private readonly onIdle?: () => void) {}

  /** `write` of the lock `value` was given up on while it may still run. */
  track(value: string, write: Promise<unknown>): void {
    let entry = this.#byValue.get(value);
    if (!entry) {
      entry = { pending: 0, release: undefined, abandoned: undefined };
      this.#byValue.set(value, entry);
    }
    const unsettled = entry;
    unsettled.pending++;
    const settled = (): void => {
      if (--unsettled.pending === 0 && this.#byValue.get(value) === unsettled) {
        this.#byValue.delete(value);
        if (this.#byValue.size === 0) this.onIdle?.();
      }
      if (unsettled.release) releaseWithRetries(unsettled.release, RELEASE_TRIES);
      for (const undo of unsettled.abandoned ?? []) releaseWithRetries(undo, RELEASE_TRIES);
    };
    write.then(settled, settled);
  }

  /** The lock `value` is being released by `send`: sent again after each of its late writes, if it has any. */
  releaseAfter(value: string, send: () => Promise<unknown>): void {
    const entry = this.#byValue.get(value);
    if (entry) entry.release = send;
  }

  /**
   * The acquire that wrote `value` ended without holding these keys with it,
   * so no write of that value will take them again: `undo` is sent again
   * after each of its late writes still out. Unlike a lock's release, a new
   * write of the value (the lock's, on other keys) does not cancel it.
   */
  abandon(value: string, undo: () => Promise<unknown>): void {
    const entry = this.#byValue.get(value);
    if (entry) (entry.abandoned ??= []).push(undo);
  }

  /**
   * A new write of `value` goes out: the lock, or the next attempt of the same
   * acquire (its attempts share one value), holds the keys again, so an
   * earlier release must not be sent again after them; its own release
   * will be, if it needs one.
   */
  rewrite(value: string): void {
    const entry = this.#byValue.get(value);
    if (entry) entry.release = undefined;
  }

  /**
   * A script was just resent in full after NOSCRIPT on the node's connection:
   * it may be one of the late writes, sent again behind the releases and
   * undos that were to follow it, and its own reply (what they wait for) may
   * never come. They are sent again now, behind it. Releases and undos only
   * delete keys that hold their value, which no live write will take again.
   */
  resent(): void {
    for (const entry of this.#byValue.values()) {
      if (entry.release) releaseWithRetries(entry.release, RELEASE_TRIES);
      for (const undo of entry.abandoned ?? []) releaseWithRetries(undo, RELEASE_TRIES);
    }
  }

  /** How many locks have a late write outstanding (for tests). */
  get size(): number {
    return this.#byValue.size;
  }
}

function releaseWithRetries(send: () => Promise<unknown>, tries: number): void {
  send().catch(() => {
    if (tries <= 1) return;
    setTimeout(() => releaseWithRetries(send, tries - 1), RELEASE_RETRY_MS).unref();
  });
}
