/**
 * A TCP proxy in front of one Redis node, with faults switchable at run time.
 *
 *   const proxy = await TcpProxy.start({ host: '127.0.0.1', port: server.port });
 *   const client = new Redis(proxy.port, proxy.host);
 *   proxy.latencyMs = 50;        // every chunk delayed 50 ms, both ways, order kept
 *   proxy.blackhole();           // read and discard everything, both ways
 *   proxy.dropReplies();         // requests reach Redis (and are applied), replies are discarded
 *   proxy.resetAfterRequest();   // one shot: forward the next request, then RST that client
 *   proxy.cutOff();              // destroy every client connection, and each new one at once
 *   proxy.heal();                // no fault, no latency; connections that lost bytes are closed
 *   await proxy.close();
 *
 * Faults are decided when a chunk arrives. A connection that lost bytes to
 * blackhole()/dropReplies() is out of step (its client would match later
 * replies to earlier commands), so heal() destroys it and the client reconnects.
 * Arm resetAfterRequest() only once the client is connected and ready, or it
 * will hit the client's own handshake (ioredis sends INFO for its ready check).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyFault = 'none' | 'blackhole' | 'dropReplies' | 'resetAfterRequest' | 'cutOff';

export interface ProxyTarget {
  readonly host: string;
  readonly port: number;
}

export interface TcpProxyOptions {
  /** Listen host (default 127.0.0.1). */
  readonly host?: string;
  /** Listen port (default: a free one). */
  readonly port?: number;
  /** Initial latency in ms (default 0). */
  readonly latencyMs?: number;
}

export interface ProxyStats {
  /** Client connections accepted (including ones destroyed by cutOff). */
  connections: number;
  /** Bytes read from clients / from the node, whatever became of them. */
  bytesFromClients: number;
  bytesFromServer: number;
  /** Bytes and chunks delivered to the node / to clients. */
  bytesToServer: number;
  bytesToClient: number;
  chunksToServer: number;
  chunksToClient: number;
  /** Bytes discarded by blackhole/dropReplies/resetAfterRequest. */
  bytesDropped: number;
  /** Connections reset by resetAfterRequest. */
  resets: number;
}

interface Pending {
  readonly at: number;
  readonly data: Buffer;
  readonly onDelivered: (() => void) | undefined;
}

/** Ordered, optionally delayed delivery of chunks to one socket. */
class Lane {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastAt = 0;

  constructor(
    private readonly dest: Socket,
    private readonly delivered: (bytes: number) => void,
  ) {}

  push(data: Buffer, delayMs: number, onDelivered?: () => void): void {
    const now = Date.now();
    if (delayMs <= 0 && this.queue.length === 0) {
      this.write(data, onDelivered);
      return;
    }
    // Never before an earlier chunk: order is kept even when the latency changes.
    const at = Math.max(now + delayMs, this.lastAt);
    this.lastAt = at;
    this.queue.push({ at, data, onDelivered });
    this.schedule();
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    const head = this.queue[0];
    if (head === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = Date.now();
      while (this.queue[0] !== undefined && this.queue[0].at <= now) {
        const next = this.queue.shift();
        if (next !== undefined) this.write(next.data, next.onDelivered);
      }
      this.schedule();
    }, Math.max(0, head.at - Date.now()));
  }

  private write(data: Buffer, onDelivered: (() => void) | undefined): void {
    if (this.dest.destroyed) return;
    this.delivered(data.length);
    if (onDelivered === undefined) {
      this.dest.write(data);
    } else {
      this.dest.write(data, () => onDelivered());
    }
  }
}

class Link {
  /** Lost bytes in some direction: the RESP streams are out of step. */
  tainted = false;
  /** The client was reset after its request; the reply is awaited and discarded. */
  orphaned = false;
  /** Nothing passes before this (Date.now() ms): the proxy's connectDelayMs when it was accepted. */
  readonly passesFrom: number;
  readonly toServer: Lane;
  readonly toClient: Lane;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
    stats: ProxyStats,
    connectDelayMs: number,
  ) {
    this.passesFrom = Date.now() + connectDelayMs;
    this.toServer = new Lane(upstream, (n) => {
      stats.bytesToServer += n;
      stats.chunksToServer += 1;
    });
    this.toClient = new Lane(client, (n) => {
      stats.bytesToClient += n;
      stats.chunksToClient += 1;
    });
  }

  destroy(): void {
    this.toServer.clear();
    this.toClient.clear();
    this.client.destroy();
    this.upstream.destroy();
  }
}

export class TcpProxy {
  readonly host: string;
  readonly target: ProxyTarget;
  /** Delay applied to every chunk, both directions. */
  latencyMs: number;
  /**
   * For connections accepted from now on: nothing passes either way until
   * they are this old, as a connection slow to set up (far away, TLS) looks
   * to its client: connected, not ready.
   */
  connectDelayMs = 0;

  private readonly server: Server;
  private readonly links = new Set<Link>();
  private currentFault: ProxyFault = 'none';
  private listenPort: number | undefined;
  private closed = false;
  private readonly counters: ProxyStats = {
    connections: 0,
    bytesFromClients: 0,
    bytesFromServer: 0,
    bytesToServer: 0,
    bytesToClient: 0,
    chunksToServer: 0,
    chunksToClient: 0,
    bytesDropped: 0,
    resets: 0,
  };

  private constructor(target: ProxyTarget, options: TcpProxyOptions) {
    this.target = target;
    this.host = options.host ?? '127.0.0.1';
    this.latencyMs = options.latencyMs ?? 0;
    this.server = createServer((socket) => this.accept(socket));
  }

  static async start(target: ProxyTarget, options: TcpProxyOptions = {}): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, options);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen({ host: proxy.host, port: options.port ?? 0 }, () => {
        proxy.server.off('error', reject);
        resolve();
      });
    });
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('TcpProxy: no address');
    proxy.listenPort = address.port;
    return proxy;
  }

  get port(): number {
    if (this.listenPort === undefined) throw new Error('TcpProxy: not listening');
    return this.listenPort;
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  get fault(): ProxyFault {
    return this.currentFault;
  }

  get stats(): Readonly<ProxyStats> {
    return { ...this.counters };
  }

  /** Open client connections. */
  get connectionCount(): number {
    return this.links.size;
  }

  blackhole(): void {
    this.currentFault = 'blackhole';
  }

  dropReplies(): void {
    this.currentFault = 'dropReplies';
  }

  /** One shot: the next request chunk from any client is forwarded, then that client is reset. */
  resetAfterRequest(): void {
    this.currentFault = 'resetAfterRequest';
  }

  cutOff(): void {
    this.currentFault = 'cutOff';
    for (const link of [...this.links]) this.drop(link);
  }

  /** No fault and no latency. Connections that lost bytes are destroyed (clients reconnect). */
  heal(): void {
    this.currentFault = 'none';
    this.latencyMs = 0;
    for (const link of [...this.links]) {
      if (link.tainted) this.drop(link);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const link of [...this.links]) this.drop(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---------------------------------------------------------------------------

  private delayOn(link: Link): number {
    return this.latencyMs + Math.max(0, link.passesFrom - Date.now());
  }

  private drop(link: Link): void {
    link.destroy();
    this.links.delete(link);
  }

  private accept(client: Socket): void {
    this.counters.connections += 1;
    client.on('error', () => undefined);
    if (this.closed || this.currentFault === 'cutOff') {
      client.resetAndDestroy();
      return;
    }
    client.setNoDelay(true);
    const upstream = connect({ host: this.target.host, port: this.target.port });
    upstream.setNoDelay(true);
    upstream.on('error', () => undefined);
    const link = new Link(client, upstream, this.counters, this.connectDelayMs);
    this.links.add(link);

    client.on('data', (chunk: Buffer) => this.fromClient(link, chunk));
    upstream.on('data', (chunk: Buffer) => this.fromServer(link, chunk));
    client.on('close', () => {
      if (!link.orphaned) this.drop(link);
    });
    upstream.on('close', () => this.drop(link));
  }

  private fromClient(link: Link, chunk: Buffer): void {
    this.counters.bytesFromClients += chunk.length;
    switch (this.currentFault) {
      case 'cutOff':
      case 'blackhole':
        this.counters.bytesDropped += chunk.length;
        link.tainted = true;
        return;
      case 'resetAfterRequest':
        this.currentFault = 'none';
        link.orphaned = true;
        link.toServer.push(chunk, this.delayOn(link), () => {
          this.counters.resets += 1;
          link.toClient.clear();
          link.client.resetAndDestroy();
        });
        return;
      case 'none':
      case 'dropReplies':
        link.toServer.push(chunk, this.delayOn(link));
        return;
    }
  }

  private fromServer(link: Link, chunk: Buffer): void {
    this.counters.bytesFromServer += chunk.length;
    if (link.orphaned) {
      // The reply to the request whose client was reset: the request was applied; discard it.
      this.counters.bytesDropped += chunk.length;
      link.client.resetAndDestroy();
      this.drop(link);
      return;
    }
    switch (this.currentFault) {
      case 'cutOff':
      case 'blackhole':
      case 'dropReplies':
        this.counters.bytesDropped += chunk.length;
        link.tainted = true;
        return;
      case 'none':
      case 'resetAfterRequest':
        link.toClient.push(chunk, this.delayOn(link));
        return;
    }
  }
}
