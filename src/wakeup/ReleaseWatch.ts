import type { NodeBackend } from '../node/NodeBackend.js';
import { sleep } from '../shared/sleep.js';
import { RELEASE_CHANNEL_PREFIX } from '../scripts/release.js';
import { type HandedReservation, type HandoffStamp, handedReservation } from './handoffGrant.js';
import { ReleaseSubscriber } from './ReleaseSubscriber.js';

/**
 * One acquire call's ear for releases of its resources on every node. It is
 * opened after the first attempt finds the resource held (an uncontended
 * acquire never pays for it); from then on a wait between attempts ends at
 * the first announced release, or after the backoff delay if none comes
 * (lost messages, keys that simply expire). On several nodes it waits until
 * a quorum of them announced the release: the first announcement alone would
 * send the attempt to nodes that have not deleted the old key yet.
 */
export class ReleaseWatch {
  readonly #nodes: readonly NodeBackend[];
  readonly #keys: readonly string[];
  readonly #timeoutMs: number;
  readonly #quorum: number;
  readonly #stops: (() => void)[] = [];
  #opening: Promise<void> | undefined;
  #listening = false;
  #stopped = false;
  /** Nodes that announced a release since the last attempt. */
  readonly #announced = new Set<number>();
  #wake: (() => void) | undefined;
  /**
   * Set while the waiter has a place in the Redis wait lines: a handoff to
   * another waiter (announced with its value) is then not for us.
   */
  expected: string | undefined;
  /** Whether a release announced since the last attempt handed the key to another waiter. */
  #handedElsewhere = false;
  /** Per node: the handoff to `expected` it announced since the last attempt (see handoffGrant.ts). */
  readonly #stamps: (HandoffStamp | undefined)[] = [];

  constructor(nodes: readonly NodeBackend[], keys: readonly string[], timeoutMs: number, quorum: number) {
    this.#nodes = nodes;
    this.#keys = keys;
    this.#timeoutMs = timeoutMs;
    this.#quorum = quorum;
  }

  /** Whether a release was announced (on a quorum of nodes) since the last attempt. */
  get releaseSeen(): boolean {
    return this.#announced.size >= this.#quorum;
  }

  /**
   * Whether a release since the last attempt went to another waiter of the
   * Redis lines: the key is reserved for it, so the next attempt should join
   * the line rather than try a plain SET NX.
   */
  get handedElsewhere(): boolean {
    return this.#handedElsewhere;
  }

  /**
   * Whether a quorum of nodes handed us the key since the last attempt,
   * after that attempt's replies (`waitingSince`, see LinePosition): the lock
   * is then ours for the reservation (handoffGrant.ts).
   */
  handedReservation(waitingSince: readonly (number | undefined)[]): HandedReservation | undefined {
    if (this.#stamps.length === 0) return undefined;
    return handedReservation(this.#stamps, waitingSince, this.#quorum);
  }

  /** Whether open() was called (by any of the waiters that share this watch). */
  get opened(): boolean {
    return this.#opening !== undefined;
  }

  /** Whether open() has finished: releases from now on are heard. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Subscribes on every node that can; resolves once confirmed or timed out (every call, the same promise). */
  open(): Promise<void> {
    this.#opening ??= this.#subscribe();
    return this.#opening;
  }

  async #subscribe(): Promise<void> {
    await Promise.all(
      this.#nodes.map(async (node, index) => {
        const onRelease = (message: string, stamp?: HandoffStamp): void => {
          if (message !== '' && message !== this.expected) {
            if (this.expected !== undefined) return;
            this.#handedElsewhere = true;
          } else if (stamp !== undefined && message !== '') {
            this.#stamps[index] = stamp;
          }
          this.#announced.add(index);
          if (this.releaseSeen) this.#wake?.();
        };
        const port = node.pubSub;
        if (!port) return;
        const channels = this.#keys.map((key) => port.channelFor(RELEASE_CHANNEL_PREFIX, key));
        const stop = await ReleaseSubscriber.for(port).watch(channels, onRelease, this.#timeoutMs).catch(() => undefined);
        if (!stop) return;
        if (this.#stopped) stop();
        else this.#stops.push(stop);
      }),
    );
    this.#listening = true;
  }

  /** Forgets releases seen so far: call right before an attempt goes out. */
  beforeAttempt(): void {
    this.#announced.clear();
    this.#handedElsewhere = false;
    this.#stamps.length = 0;
  }

  /** Waits `delayMs`, or less if a release is (or was, since the last attempt) announced or the signal aborts. */
  wait(delayMs: number, signal?: AbortSignal): Promise<void> {
    if (this.releaseSeen) return Promise.resolve();
    return sleep(delayMs, signal, (end) => {
      this.#wake = end;
    });
  }

  /** Ends the current wait at once: something other than an announcement (a lock passed by a local holder) is news. */
  interrupt(): void {
    this.#wake?.();
  }

  close(): void {
    this.#stopped = true;
    for (const stop of this.#stops.splice(0)) stop();
  }
}
