import type { EventEmitter } from 'node:events';
import { NodeConnectionError } from '../shared/errors.js';

/** The part of an ioredis client (Redis or Cluster) that tells whether it can take commands. */
export interface ConnectingClient extends Pick<EventEmitter, 'once' | 'off'> {
  readonly status: string;
  connect(): Promise<void>;
}

interface Waiter {
  readonly onReady: () => void;
  readonly onFailure: (error: NodeConnectionError) => void;
}

/**
 * Holds a node's requests while its client makes its *first* connection, so
 * that connecting is not mistaken for a silent node: a fresh process's first
 * lock call would otherwise spend its node timeout on the TCP and ready-check
 * handshake and report an outage. Once the client has been ready, this gate
 * stays open for good: a node that drops later is an outage, and the node
 * timeout applies as it always did.
 *
 * It listens to the client only while somebody waits, so that a user's own
 * "unhandled error event" logging is left as it was.
 */
export class ConnectionGate {
  readonly #client: ConnectingClient;
  readonly #node: string;
  #open = false;
  /** The first connection failed: later requests fail at once with this, until the client is ready. */
  #failure: NodeConnectionError | undefined;
  #waiters: Waiter[] = [];
  #listening = false;

  constructor(client: ConnectingClient, node: string) {
    this.#client = client;
    this.#node = node;
    this.#open = client.status === 'ready';
  }

  /** True when requests go out as they come: the client is, or has once been, ready. */
  isOpen(): boolean {
    if (this.#open) return true;
    if (this.#client.status !== 'ready') return false;
    this.#open = true;
    this.#failure = undefined;
    return true;
  }

  /**
   * Calls `onReady` once the client is ready, or `onFailure` when its
   * connection fails (refused, DNS, auth, ioredis's connect timeout) or it
   * ends. Callbacks run synchronously in the order they were registered, so
   * requests held here reach the connection in the order they were sent.
   */
  whenOpen(onReady: () => void, onFailure: (error: NodeConnectionError) => void): void {
    if (this.isOpen()) {
      onReady();
      return;
    }
    const status = this.#client.status;
    if (this.#failure !== undefined || status === 'end' || status === 'close') {
      onFailure(this.#failure ?? new NodeConnectionError(this.#node, new Error(`the connection is ${status}`)));
      return;
    }
    this.#waiters.push({ onReady, onFailure });
    this.#listen();
  }

  #listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    const client = this.#client;
    const stop = (): void => {
      this.#listening = false;
      client.off('ready', onReady);
      client.off('error', onError);
      client.off('end', onEnd);
    };
    const onReady = (): void => {
      stop();
      this.#open = true;
      this.#failure = undefined;
      for (const waiter of this.#take()) waiter.onReady();
    };
    const fail = (error: NodeConnectionError): void => {
      stop();
      this.#failure = error;
      for (const waiter of this.#take()) waiter.onFailure(error);
    };
    const onError = (error: Error): void => fail(new NodeConnectionError(this.#node, error));
    const onEnd = (): void => fail(new NodeConnectionError(this.#node, new Error('the connection was closed')));
    client.once('ready', onReady);
    client.once('error', onError);
    client.once('end', onEnd);
    // With lazyConnect nothing connects until asked; a command would, but with
    // enableOfflineQueue: false it fails instead. Failure comes through 'error'.
    if (client.status === 'wait') client.connect().catch(() => {});
  }

  #take(): Waiter[] {
    const waiters = this.#waiters;
    this.#waiters = [];
    return waiters;
  }
}
