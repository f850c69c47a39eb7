/**
 * A Redlock that cheats on the wait line's handoff, for the negative controls
 * of wait-line.test.ts: it listens for the release announcements itself, and
 * when a quorum of nodes announced a handoff *to its value* (the key reserved
 * for it, for RESERVATION_MS), its next attempt does not claim the key: it
 * records a grant made up from what it heard. The design forbids exactly that
 * (the line decides only who may take a free key; the claim goes through the
 * acquire script, the quorum and the validity rule). The checker must report
 * the overlap with whoever takes the key once the reservation expires.
 *
 *   reservation-as-grant    the reservation taken for a grant of the full TTL,
 *                           counted from the moment it was heard
 *   validity-from-hearing   the reservation's own length, but counted from
 *                           the moment it was heard instead of from before
 *                           it started on the nodes (late by the delivery)
 *
 * Node outcomes of the made-up grant are the nodes that announced the
 * handoff, 'ok' (they did set the key to our value): a quorum, so only the
 * overlap can give it away.
 *
 * A control makes the ear hear late on purpose (holdEar()): the announcements
 * reach the cheat only when the control lets them, after someone else took
 * the key, so the made-up grant overlaps that holder whatever the schedule.
 */
import type { Redis } from 'ioredis';
import type { RedisClient, RedlockOptions } from '../../../src/index.js';
import { validUntil } from '../../../src/clock/validity.js';
import type { Grant } from '../../../src/shared/grant.js';
import type { ConnectWait } from '../../../src/node/RequestDeadline.js';
import { RESERVATION_MS } from '../../../src/scripts/line.js';
import { PROCESS_TAG } from '../../../src/shared/randomValue.js';
import { HANDOFF_CHANNEL_PREFIX } from '../../../src/scripts/release.js';
import type { LinePosition } from '../../../src/wakeup/LinePosition.js';
import { ObservedRedlock, type ObserverOptions } from '../history/ObservedRedlock.js';

export type HandoffCheat = 'reservation-as-grant' | 'validity-from-hearing';

interface Heard {
  /** performance.now() when the quorum-th node's announcement arrived. */
  readonly at: number;
  /** Library labels (host:port) of the nodes that announced it. */
  readonly nodes: readonly string[];
}

export interface HeldEar {
  /** Resolves once an in-line attempt waits for the ear: no attempt of ours is out on the nodes then. */
  readonly parked: Promise<void>;
  /** Lets the ear hear what it held back, now. */
  hear(): void;
}

/** How long an in-line attempt waits for our own ear, which may hear a little after the library's. */
const EAR_GRACE_MS = 200;

export class CheatingRedlock extends ObservedRedlock {
  readonly #cheat: HandoffCheat;
  #earGraceMs = EAR_GRACE_MS;
  #onParked: (() => void) | undefined;
  readonly #ears: Redis[];
  /** Per value: the nodes (by label) that announced a handoff to it, with the time each did. */
  readonly #handoffs = new Map<string, Map<string, number>>();
  readonly #waiters = new Set<() => void>();
  /** While the ear is held: what it heard, delivered when it is let go. */
  #held: (() => void)[] | undefined;

  /**
   * `ears`: one connection per node, in node order, on which it hears the
   * announcements itself (through links of their own, which may be slower
   * than the locker's: the library's own watch wakes the attempt in time).
   */
  constructor(
    clients: readonly Redis[],
    options: Omit<RedlockOptions, 'clock'>,
    observer: ObserverOptions,
    cheat: HandoffCheat,
    ears: readonly Redis[],
  ) {
    super(clients as readonly RedisClient[], options, observer);
    this.#cheat = cheat;
    this.#ears = [...ears];
    ears.forEach((ear, i) => {
      const client = clients[i] as Redis;
      // The node's label in the library's outcomes (and so in the history).
      const label = `${client.options.host}:${client.options.port}`;
      // A handoff to one of our values: 'value key' on this process's handoff channel.
      ear.on('message', (_channel: string, message: string) => {
        const hear = (): void => this.#heard(label, message.slice(0, message.indexOf(' ')));
        if (this.#held === undefined) hear();
        else this.#held.push(hear);
      });
    });
  }

  /**
   * Holds back what the ear hears until the returned function is called;
   * meanwhile an in-line attempt waits for it (up to `waitMs`) instead of
   * claiming the key.
   */
  holdEar(waitMs: number): HeldEar {
    const held: (() => void)[] = [];
    this.#held = held;
    this.#earGraceMs = waitMs;
    const parked = new Promise<void>((resolve) => {
      this.#onParked = resolve;
    });
    return {
      parked,
      hear: () => {
        this.#held = undefined;
        this.#earGraceMs = EAR_GRACE_MS;
        for (const hear of held) hear();
      },
    };
  }

  /** The library's own taking of handoffs is off: the cheat replaces it. */
  protected override takesHandoffs(): boolean {
    return false;
  }

  /** Subscribes to the handoffs to this process's waiters on every node; resolves once all confirmed. */
  async listen(): Promise<void> {
    await Promise.all(this.#ears.map((ear) => ear.subscribe(`${HANDOFF_CHANNEL_PREFIX}${PROCESS_TAG}`)));
  }

  /** Disconnects the cheat's own subscriber connections (the locker's close() is the library's). */
  closeEars(): void {
    for (const ear of this.#ears) ear.disconnect();
  }

  protected override async acquireRound(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    if (position !== undefined && this.#held !== undefined) this.#onParked?.();
    const heard = position === undefined ? undefined : await this.#handoffTo(value, this.#earGraceMs);
    if (heard === undefined) return super.acquireRound(keys, value, ttlMs, position, connectWait);
    const lengthMs = this.#cheat === 'reservation-as-grant' ? ttlMs : RESERVATION_MS;
    return {
      validUntil: validUntil(lengthMs, heard.at, this.settings),
      ttlMs: lengthMs,
      outcomes: heard.nodes.map((node) => ({ node, status: 'ok' as const, ms: 0 })),
    };
  }

  #heard(node: string, message: string): void {
    if (message === '') return;
    let nodes = this.#handoffs.get(message);
    if (nodes === undefined) this.#handoffs.set(message, (nodes = new Map()));
    if (!nodes.has(node)) nodes.set(node, performance.now());
    for (const wake of this.#waiters) wake();
  }

  #handoffTo(value: string, waitMs: number): Promise<Heard | undefined> {
    const check = (): Heard | undefined => {
      const nodes = this.#handoffs.get(value);
      if (nodes === undefined || nodes.size < this.quorum) return undefined;
      return { at: [...nodes.values()].sort((a, b) => a - b)[this.quorum - 1] as number, nodes: [...nodes.keys()] };
    };
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(onNews);
        resolve(check());
      };
      const onNews = (): void => {
        if (check() !== undefined) finish();
      };
      // A timer may fire a little early on performance.now(): it ends the wait whatever the clock says.
      const timer = setTimeout(finish, waitMs);
      this.#waiters.add(onNews);
    });
  }
}
