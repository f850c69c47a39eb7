import type { ClientAdapter } from './ClientAdapter.js';
import type { PubSubConnection, PubSubPort } from './PubSub.js';

/** Subscriptions on a connection of their own: a subscribed connection can run nothing else. */
export class RedisPubSub implements PubSubPort {
  constructor(
    private readonly adapter: ClientAdapter,
    readonly id: string,
  ) {}

  channelFor(prefix: string, key: string): string {
    return `${prefix}${this.adapter.keyPrefix}${key}`;
  }

  connect(): PubSubConnection {
    return (this.adapter.subscriber as () => PubSubConnection)();
  }
}
