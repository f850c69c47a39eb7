/**
 * Nodes as `redis:5` containers via testcontainers (needs a Docker engine).
 * No fault injection here: the type offers only the common NodeSet API.
 * testcontainers is imported lazily so local runs never load it.
 */
import type { StartedTestContainer } from 'testcontainers';
import { BaseNodeSet, settleAll, type NodeEndpoint, type RedisProvider, type StartOptions } from './nodeSet.js';

const REDIS_PORT = 6379;

export class ContainerNodeSet extends BaseNodeSet {
  readonly provider = 'container' as const;
  readonly endpoints: readonly NodeEndpoint[];

  constructor(private readonly containers: readonly StartedTestContainer[]) {
    super();
    this.endpoints = containers.map((c) => ({ host: c.getHost(), port: c.getMappedPort(REDIS_PORT) }));
  }

  protected override async shutdown(): Promise<void> {
    await settleAll(
      this.containers.map((c) => c.stop()),
      'ContainerNodeSet.stopAll',
    );
  }
}

export const containerProvider: RedisProvider<ContainerNodeSet> = {
  name: 'container',
  async start(n: number, options: StartOptions = {}): Promise<ContainerNodeSet> {
    const { GenericContainer, Wait } = await import('testcontainers');
    const image = process.env['QUORUMLOCK_REDIS_IMAGE'] ?? 'redis:5';
    const persistence =
      (options.persistence ?? 'none') === 'none'
        ? ['--save', '', '--appendonly', 'no']
        : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    const results = await Promise.allSettled(
      Array.from({ length: n }, () =>
        new GenericContainer(image)
          .withCommand(['redis-server', ...persistence])
          .withExposedPorts(REDIS_PORT)
          .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
          .start(),
      ),
    );
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length > 0) {
      await Promise.allSettled(started.map((c) => c.stop()));
      throw new AggregateError(failed, `containerProvider.start: ${failed.length} of ${n} containers failed`);
    }
    return new ContainerNodeSet(started);
  },
};
