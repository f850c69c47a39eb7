/**
 * A node's publish/subscribe capability, with no idea what it is used for:
 * the wakeup layer opens one connection per node and decides what to listen to.
 */
export interface PubSubConnection {
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  /** Every message on the subscribed channels. */
  onMessage(listener: (channel: string, message: string) => void): void;
  /** After each (re)connection: subscriptions are not restored by themselves. */
  onReady(listener: () => void): void;
  disconnect(): void;
}

export interface PubSubPort {
  /** The same for every port to the same node: connections are shared by it. */
  readonly id: string;
  /** The channel a script publishes on for `key` as the node stores it (with the client's keyPrefix). */
  channelFor(prefix: string, key: string): string;
  connect(): PubSubConnection;
}
