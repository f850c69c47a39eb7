import { Redis, type RedisOptions } from 'ioredis';
import { checkDistinctServers } from './distinctServers.js';
import type { NodeAddress, SentinelTarget } from './nodeUrls.js';

export interface ConnectionOptions {
  /** How long to wait for each node to connect (and, if given, to answer). */
  readonly connectTimeoutMs: number;
  /** Per-command timeout, for commands sent outside the library (status, release). */
  readonly commandTimeoutMs?: number;
  /** Shown by CLIENT LIST, so operators see who holds a connection. */
  readonly connectionName: string;
}

/** One ioredis client per node, tuned so an unreachable node fails fast. */
export class NodeConnections {
  readonly addresses: readonly NodeAddress[];
  readonly clients: readonly Redis[];
  readonly #connectTimeoutMs: number;
  #ready: Promise<(Error | undefined)[]> | undefined;

  constructor(addresses: readonly NodeAddress[], options: ConnectionOptions) {
    this.addresses = addresses;
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.clients = addresses.map((address) => {
      const tuning: RedisOptions = {
        connectTimeout: options.connectTimeoutMs,
        connectionName: options.connectionName,
        // One resend after a reconnect, then the command fails; the library's
        // per-node timeout bounds lock requests anyway.
        maxRetriesPerRequest: 1,
        retryStrategy: (times) => Math.min(times * 50, 500),
        // disconnect() waits this long for a 'close' that a socket which
        // already failed never emits again (ioredis 5 AbstractConnector):
        // with the default 2 s, a down node kept the process alive 2 s more.
        disconnectTimeout: 200,
        ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
      };
      const client = address.sentinel ? new Redis({ ...sentinelOptions(address.sentinel), ...tuning }) : new Redis(address.url, tuning);
      // Connection errors reach the user through the outcome of each request;
      // without a listener ioredis would also print them.
      client.on('error', () => undefined);
      return client;
    });
  }

  /**
   * Waits until every node is ready or has failed to connect, so the first
   * lock request is not spent on the TCP and ready-check handshake, then
   * rejects with a usage failure if two of them are one server. Resolves to
   * each node's connection error (undefined when it is ready).
   */
  ready(): Promise<(Error | undefined)[]> {
    this.#ready ??= this.#connect();
    return this.#ready;
  }

  async #connect(): Promise<(Error | undefined)[]> {
    const connectErrors = await Promise.all(this.clients.map((client) => whenReady(client, this.#connectTimeoutMs)));
    await checkDistinctServers(this.addresses, this.clients, connectErrors, this.#connectTimeoutMs);
    return connectErrors;
  }

  /**
   * Once every node is ready or has failed to connect, asks each ready node
   * with `ask`, and describes each failed one with `unreachable`.
   */
  async eachNode<T>(
    ask: (client: Redis, node: string) => Promise<T>,
    unreachable: (node: string, error: Error) => T,
  ): Promise<T[]> {
    const connectErrors = await this.ready();
    return Promise.all(
      this.clients.map((client, index) => {
        const node = this.addresses[index]?.label ?? `#${index + 1}`;
        const error = connectErrors[index];
        return error ? unreachable(node, error) : ask(client, node);
      }),
    );
  }

  /** Closes every connection at once; nothing is left to keep the process alive. */
  close(): void {
    for (const client of this.clients) client.disconnect();
  }
}

/**
 * The master is found through the sentinels, and found again when its
 * connection drops or a demoted master refuses a write (READONLY): a lock
 * held across a failover is then extended on the new master, or lost there,
 * rather than refused by a replica until the end. No `failoverDetector`: in
 * ioredis 5.11 a switch announced while the client reconnects ends the
 * client for good.
 */
function sentinelOptions(target: SentinelTarget): RedisOptions {
  return {
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.name,
    db: target.db,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    sentinelRetryStrategy: (times) => Math.min(times * 50, 500),
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
  };
}

function whenReady(client: Redis, timeoutMs: number): Promise<Error | undefined> {
  if (client.status === 'ready') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const finish = (error: Error | undefined): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      resolve(error);
    };
    const onReady = (): void => finish(undefined);
    const onError = (error: Error): void => finish(error);
    const timer = setTimeout(() => finish(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    client.once('ready', onReady);
    client.once('error', onError);
  });
}
