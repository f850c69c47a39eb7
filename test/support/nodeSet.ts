/**
 * What every provider of Redis nodes hands a test: endpoints, tracked ioredis
 * clients, flushAll() and an idempotent stopAll(). Fault injection lives only
 * on LocalNodeSet (localProvider.ts).
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Persistence } from './RedisServer.js';

export interface NodeEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface StartOptions {
  /** Default 'none'. */
  readonly persistence?: Persistence;
}

/**
 * Client options used by NodeSet.clients() unless overridden: fail fast
 * (one retry per request, short reconnect back-off), connect eagerly.
 * Tests that must see a missing reply add `commandTimeout`.
 */
export const defaultClientOptions: Readonly<RedisOptions> = Object.freeze({
  lazyConnect: false,
  enableReadyCheck: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  retryStrategy: (times: number): number => Math.min(times * 50, 500),
});

export interface NodeSet {
  readonly provider: 'local' | 'container';
  readonly endpoints: readonly NodeEndpoint[];
  readonly urls: readonly string[];
  /** One new client per node, `{ ...defaultClientOptions, ...options }`; closed by stopAll(). */
  clients(options?: RedisOptions): Redis[];
  /** One new client to `endpoint` (any host/port, e.g. a proxy); closed by stopAll(). */
  clientTo(endpoint: NodeEndpoint, options?: RedisOptions): Redis;
  /** FLUSHALL on every reachable node. */
  flushAll(): Promise<void>;
  /** Disconnect every client, then stop every node. Idempotent. */
  stopAll(): Promise<void>;
}

export interface RedisProvider<S extends NodeSet = NodeSet> {
  readonly name: S['provider'];
  start(n: number, options?: StartOptions): Promise<S>;
}

export function urlOf(endpoint: NodeEndpoint): string {
  return `redis://${endpoint.host}:${endpoint.port}`;
}

/** Client tracking, flushAll and stopAll shared by the providers. */
export abstract class BaseNodeSet implements NodeSet {
  abstract readonly provider: 'local' | 'container';
  abstract readonly endpoints: readonly NodeEndpoint[];

  private readonly tracked = new Set<Redis>();
  private stopping: Promise<void> | undefined;

  get urls(): string[] {
    return this.endpoints.map(urlOf);
  }

  clients(options: RedisOptions = {}): Redis[] {
    return this.endpoints.map((endpoint) => this.clientTo(endpoint, options));
  }

  clientTo(endpoint: NodeEndpoint, options: RedisOptions = {}): Redis {
    if (this.stopping !== undefined) throw new Error('NodeSet: already stopped');
    const client = new Redis({
      ...defaultClientOptions,
      ...options,
      host: endpoint.host,
      port: endpoint.port,
    });
    // Without a listener ioredis prints every connection error; tests that care add their own.
    client.on('error', () => undefined);
    this.tracked.add(client);
    return client;
  }

  async flushAll(): Promise<void> {
    await Promise.all(this.flushableEndpoints().map((endpoint) => flushEndpoint(endpoint)));
  }

  stopAll(): Promise<void> {
    this.stopping ??= this.doStopAll();
    return this.stopping;
  }

  /** Endpoints that can answer right now (local sets skip stopped and paused nodes). */
  protected flushableEndpoints(): readonly NodeEndpoint[] {
    return this.endpoints;
  }

  /** Close proxies (if any) and stop the nodes, resuming paused ones first. */
  protected abstract shutdown(): Promise<void>;

  private async doStopAll(): Promise<void> {
    for (const client of this.tracked) client.disconnect();
    this.tracked.clear();
    await this.shutdown();
  }
}

async function flushEndpoint(endpoint: NodeEndpoint): Promise<void> {
  const client = new Redis({
    host: endpoint.host,
    port: endpoint.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    commandTimeout: 5000,
    connectTimeout: 2000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.flushall();
  } finally {
    client.disconnect();
  }
}

/** Run every task, then throw one error naming all failures (if any). */
export async function settleAll(tasks: readonly Promise<unknown>[], what: string): Promise<void> {
  const results = await Promise.allSettled(tasks);
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length > 0) throw new AggregateError(errors, `${what}: ${errors.length} failure(s)`);
}
