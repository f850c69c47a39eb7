/**
 * The nodes of a chaos test file, and the network between them and each
 * locker: every locker (in this process or in a worker) reaches every node
 * through a TcpProxy of its own, so a fault can cut one locker off one node
 * (an asymmetric partition) or hit a node for everybody (all its links).
 */
import type { Redis, RedisOptions } from 'ioredis';
import { type LocalNodeSet, startNodes, type StartOptions } from '../../support/harness.js';
import { TcpProxy } from '../../support/TcpProxy.js';

/** One locker's links: a proxy per node, in node order. */
export interface Links {
  readonly proxies: readonly TcpProxy[];
  /** Library node label (`127.0.0.1:<proxy port>`) → node name (`n0`...). */
  readonly nodeNames: ReadonlyMap<string, string>;
}

export class ChaosCluster {
  private readonly links: Links[] = [];
  private readonly adminClients: Redis[] = [];

  private constructor(readonly set: LocalNodeSet) {}

  static async start(nodes = 5, options: StartOptions = {}): Promise<ChaosCluster> {
    return new ChaosCluster(await startNodes(nodes, options));
  }

  get size(): number {
    return this.set.nodes.length;
  }

  nodeName(index: number): string {
    return `n${index}`;
  }

  /** New proxies, one per node, for one locker. */
  async openLinks(): Promise<Links> {
    const proxies = await Promise.all(this.set.nodes.map((node) => TcpProxy.start({ host: node.host, port: node.port })));
    const nodeNames = new Map(proxies.map((proxy, i) => [`${proxy.host}:${proxy.port}`, this.nodeName(i)]));
    const links = { proxies, nodeNames };
    this.links.push(links);
    return links;
  }

  /** ioredis clients through `links`, one per node (closed by closeScenario()/stop()). */
  clientsThrough(links: Links, options: RedisOptions = {}): Redis[] {
    return links.proxies.map((proxy) => this.set.clientTo({ host: proxy.host, port: proxy.port }, options));
  }

  /** A direct client to node `index` for the test itself (skew nemesis, probes). */
  admin(index: number): Redis {
    const node = this.set.node(index);
    const client = this.set.clientTo({ host: node.host, port: node.port });
    this.adminClients.push(client);
    return client;
  }

  /** Every locker's proxy to node `index`. */
  proxiesTo(index: number): TcpProxy[] {
    return this.links.map((l) => l.proxies[index]).filter((p): p is TcpProxy => p !== undefined);
  }

  /**
   * After a scenario: close its proxies and admin clients, bring every node
   * back (resume, restart empty) and flush it, so the next scenario starts clean.
   */
  async closeScenario(clients: readonly Redis[] = []): Promise<void> {
    for (const client of [...clients, ...this.adminClients.splice(0)]) client.disconnect();
    await Promise.all(this.links.splice(0).flatMap((l) => l.proxies.map((p) => p.close())));
    for (const node of this.set.nodes) {
      if (node.isPaused) await node.resume();
      if (!node.isRunning) await node.restart({ empty: true });
    }
    await this.set.flushAll();
  }

  async stop(): Promise<void> {
    for (const client of this.adminClients.splice(0)) client.disconnect();
    await Promise.all(this.links.splice(0).flatMap((l) => l.proxies.map((p) => p.close())));
    await this.set.stopAll();
  }
}
