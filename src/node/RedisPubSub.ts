import type { Cluster, Redis } from 'ioredis';
import type { PubSubConnection, PubSubPort } from './PubSub.js';

/** Subscriptions on a duplicate of the user's client: a subscribed connection can run nothing else. */
export class RedisPubSub implements PubSubPort {
  constructor(
    private readonly client: Redis | Cluster,
    readonly id: string,
    private readonly keyPrefix: string,
  ) {}

  channelFor(prefix: string, key: string): string {
    return `${prefix}${this.keyPrefix}${key}`;
  }

  connect(): PubSubConnection {
    // ioredis's own resubscribe after a reconnect leaves its failure unhandled
    // (a closed connection, a NOPERM from ACLs), which would crash the process;
    // the subscriber resubscribes instead (onReady), where a failure is
    // harmless. No ready check: SUBSCRIBE is served while a node loads its
    // data, and the check's INFO was 40% of the CPU that opening these
    // connections cost, paid by every process at its first contention, when
    // its waiters are busiest.
    const connection = (this.client as Redis).duplicate({ autoResubscribe: false, enableReadyCheck: false });
    // Errors surface as timeouts of the subscriptions; callers fall back on polling.
    connection.on('error', () => undefined);
    return {
      subscribe: (...channels) => connection.subscribe(...channels),
      unsubscribe: (...channels) => connection.unsubscribe(...channels),
      onMessage: (listener) => connection.on('message', listener),
      onReady: (listener) => connection.on('ready', listener),
      disconnect: () => connection.disconnect(),
    };
  }
}
