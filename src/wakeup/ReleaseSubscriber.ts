import { PROCESS_TAG } from '../shared/randomValue.js';
import type { PubSubConnection, PubSubPort } from '../node/PubSub.js';
import { HANDOFF_CHANNEL_PREFIX, RELEASE_CHANNEL_PREFIX } from '../scripts/release.js';
import { type HandoffStamp, parseHandoff } from './handoffGrant.js';

/**
 * Hears each announcement's payload: a handoff names the waiter it is for
 * (with its stamp when it came on the process's handoff channel), '' is for
 * anybody.
 */
type Listener = (message: string, stamp?: HandoffStamp) => void;

/**
 * How long a channel nobody listens to stays subscribed (and an idle
 * connection open): bursts of contention then cost one SUBSCRIBE, not one per
 * critical section, and a process still exits by itself soon after.
 */
const LINGER_MS = 500;

/** Where the nodes announce handoffs to this process's waiters (line.lua's announce_handoff). */
const HANDOFF_CHANNEL = HANDOFF_CHANNEL_PREFIX + PROCESS_TAG;

const byNode = new Map<string, ReleaseSubscriber>();

/**
 * One SUBSCRIBE connection per node for the whole process, shared by every
 * waiter on that node: a duplicate of the user's client, opened when the
 * first waiter needs it and closed once none has for a moment. Besides the
 * release channels of the keys waited for, it listens to the process's
 * handoff channel, and passes each handoff on as if it came on its key's
 * release channel.
 */
export class ReleaseSubscriber {
  readonly #port: PubSubPort;
  #connection: PubSubConnection | undefined;
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #subscribed = new Map<string, Promise<unknown>>();
  #sweepTimer: NodeJS.Timeout | undefined;
  /** The handoff channel's subscription, made with the connection. */
  #handoffSubscribed: Promise<unknown> = Promise.resolve();

  private constructor(port: PubSubPort) {
    this.#port = port;
  }

  static for(port: PubSubPort): ReleaseSubscriber {
    let subscriber = byNode.get(port.id);
    if (!subscriber) {
      subscriber = new ReleaseSubscriber(port);
      byNode.set(port.id, subscriber);
    }
    return subscriber;
  }

  /**
   * Calls `listener` on every announcement on `channels`. Resolves once the
   * node confirmed the subscriptions, or after `timeoutMs` (waiters then rely
   * on polling); resolves to the function that stops listening.
   */
  async watch(channels: readonly string[], listener: Listener, timeoutMs: number): Promise<() => void> {
    const connection = this.#connect();
    const confirmations: Promise<unknown>[] = [this.#handoffSubscribed];
    for (const channel of channels) {
      let listeners = this.#listeners.get(channel);
      if (!listeners) {
        listeners = new Set();
        this.#listeners.set(channel, listeners);
      }
      listeners.add(listener);
      let confirmation = this.#subscribed.get(channel);
      if (!confirmation) {
        confirmation = connection.subscribe(channel).catch(() => undefined);
        this.#subscribed.set(channel, confirmation);
      }
      confirmations.push(confirmation);
    }
    await withDeadline(Promise.all(confirmations), timeoutMs);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      for (const channel of channels) this.#listeners.get(channel)?.delete(listener);
      this.#scheduleSweep();
    };
  }

  /**
   * The node's subscriber connection closes now if no waiter listens on it
   * (a closed locker's waiters have left), not after the linger.
   */
  static closeIfIdle(port: PubSubPort): void {
    const subscriber = byNode.get(port.id);
    if (!subscriber) return;
    for (const listeners of subscriber.#listeners.values()) if (listeners.size > 0) return;
    clearTimeout(subscriber.#sweepTimer);
    subscriber.#sweepTimer = undefined;
    subscriber.#sweep();
  }

  #scheduleSweep(): void {
    if (this.#sweepTimer) return;
    this.#sweepTimer = setTimeout(() => {
      this.#sweepTimer = undefined;
      this.#sweep();
    }, LINGER_MS);
    this.#sweepTimer.unref();
  }

  /** Unsubscribes channels nobody listens to; closes the connection once none is left. */
  #sweep(): void {
    const unused = [...this.#listeners].filter(([, listeners]) => listeners.size === 0).map(([channel]) => channel);
    for (const channel of unused) {
      this.#listeners.delete(channel);
      this.#subscribed.delete(channel);
    }
    if (this.#listeners.size === 0) {
      this.#connection?.disconnect();
      this.#connection = undefined;
      this.#subscribed.clear();
      if (byNode.get(this.#port.id) === this) byNode.delete(this.#port.id);
    } else if (unused.length > 0) {
      this.#connection?.unsubscribe(...unused).catch(() => undefined);
    }
  }

  #connect(): PubSubConnection {
    if (this.#connection) return this.#connection;
    const connection = this.#port.connect();
    connection.onReady(() => {
      connection.subscribe(HANDOFF_CHANNEL, ...this.#subscribed.keys()).catch(() => undefined);
    });
    connection.onMessage((channel, message) => {
      if (channel === HANDOFF_CHANNEL) {
        const handoff = parseHandoff(message);
        if (handoff) this.#dispatch(RELEASE_CHANNEL_PREFIX + handoff.key, handoff.value, handoff.stamp);
        return;
      }
      this.#dispatch(channel, message);
    });
    this.#handoffSubscribed = connection.subscribe(HANDOFF_CHANNEL).catch(() => undefined);
    this.#connection = connection;
    return connection;
  }

  #dispatch(channel: string, message: string, stamp?: HandoffStamp): void {
    const listeners = this.#listeners.get(channel);
    if (listeners) for (const listener of [...listeners]) listener(message, stamp);
  }
}

function withDeadline(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
