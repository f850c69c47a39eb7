/**
 * A real Redis Cluster of `n` masters (no replicas) from local redis-server
 * processes, for the tests of quorumlock on an ioredis Cluster client.
 *
 *   const cluster = await startCluster(3);
 *   const client = cluster.client();
 *   afterAll(() => cluster.stop());
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort } from './freePort.js';
import { RedisServer } from './RedisServer.js';

const run = promisify(execFile);

export class RedisClusterSet {
  private readonly clients: Cluster[] = [];

  constructor(readonly servers: readonly RedisServer[]) {}

  /** A new Cluster client, closed by stop(). */
  client(): Cluster {
    const client = new Cluster(
      this.servers.map((server) => ({ host: server.host, port: server.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    this.clients.push(client);
    return client;
  }

  async stop(): Promise<void> {
    for (const client of this.clients.splice(0)) client.disconnect();
    await Promise.all(this.servers.map((server) => server.stop()));
  }
}

export async function startCluster(n: number): Promise<RedisClusterSet> {
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < n; i++) {
      // The cluster bus normally takes port + 10000, which may be taken or out of range.
      const busPort = await freePort();
      const server = new RedisServer({
        extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(busPort)],
      });
      await server.start();
      servers.push(server);
    }
    await run('redis-cli', [
      '--cluster', 'create',
      ...servers.map((server) => `${server.host}:${server.port}`),
      '--cluster-replicas', '0',
      '--cluster-yes',
    ]);
    await waitForClusterOk(servers);
    return new RedisClusterSet(servers);
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    throw error;
  }
}

async function waitForClusterOk(servers: readonly RedisServer[]): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const states = await Promise.all(
      servers.map(async (server) => {
        const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
        try {
          return /cluster_state:ok/.test(await client.cluster('INFO'));
        } finally {
          client.disconnect();
        }
      }),
    );
    if (states.every(Boolean)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the cluster never reached cluster_state:ok');
}
