/**
 * Nodes as local redis-server processes, with fault injection: each node is a
 * RedisServer (kill/pause/resume/restart) and can sit behind a TcpProxy.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { BaseNodeSet, settleAll, type NodeEndpoint, type RedisProvider, type StartOptions } from './nodeSet.js';
import { RedisServer } from './RedisServer.js';
import { TcpProxy } from './TcpProxy.js';

export class LocalNodeSet extends BaseNodeSet {
  readonly provider = 'local' as const;
  readonly nodes: readonly RedisServer[];
  private proxyList: Promise<TcpProxy[]> | undefined;

  constructor(nodes: readonly RedisServer[]) {
    super();
    this.nodes = nodes;
  }

  /** Endpoints of the servers themselves (ports stay the same across restarts). */
  get endpoints(): NodeEndpoint[] {
    return this.nodes.map((node) => ({ host: node.host, port: node.port }));
  }

  node(index: number): RedisServer {
    const node = this.nodes[index];
    if (node === undefined) throw new RangeError(`no node ${index} (have ${this.nodes.length})`);
    return node;
  }

  /** One TcpProxy per node, created on first call; closed by stopAll(). */
  proxies(): Promise<TcpProxy[]> {
    this.proxyList ??= Promise.all(this.nodes.map((node) => TcpProxy.start({ host: node.host, port: node.port })));
    return this.proxyList;
  }

  /** One new client per node, through that node's proxy; closed by stopAll(). */
  async proxiedClients(options: RedisOptions = {}): Promise<Redis[]> {
    const proxies = await this.proxies();
    return proxies.map((proxy) => this.clientTo({ host: proxy.host, port: proxy.port }, options));
  }

  protected override flushableEndpoints(): NodeEndpoint[] {
    return this.nodes
      .filter((node) => node.isRunning && !node.isPaused)
      .map((node) => ({ host: node.host, port: node.port }));
  }

  protected override async shutdown(): Promise<void> {
    const proxies = this.proxyList === undefined ? [] : await this.proxyList.catch(() => []);
    await settleAll(
      [...proxies.map((proxy) => proxy.close()), ...this.nodes.map((node) => node.stop())],
      'LocalNodeSet.stopAll',
    );
  }
}

export const localProvider: RedisProvider<LocalNodeSet> = {
  name: 'local',
  async start(n: number, options: StartOptions = {}): Promise<LocalNodeSet> {
    const nodes = Array.from({ length: n }, () => new RedisServer({ persistence: options.persistence ?? 'none' }));
    try {
      await settleAll(
        nodes.map((node) => node.start()),
        'localProvider.start',
      );
    } catch (err) {
      await Promise.allSettled(nodes.map((node) => node.stop()));
      throw err;
    }
    return new LocalNodeSet(nodes);
  },
};
