/**
 * A 3-server ZooKeeper ensemble on loopback, in a folder of its own, with
 * Debian's zookeeper 3.8 jars and its shipped zoo.cfg timings (tickTime 2000,
 * initLimit 10, syncLimit 5). ZooKeeper fsyncs its transaction log before a
 * server acknowledges a write (forceSync=yes, the default). The four-letter
 * words srvr and mntr are allowed: they tell the leader and the fsync count.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort, releasePort } from '../../../test/support/freePort.js';
import { ServerProcess } from './serverProcess.js';

/** Debian's jars: zookeeper.jar names its dependencies in its manifest's Class-Path. */
const CLASSPATH = '/usr/share/java/zookeeper.jar';
const LOG4J = '/etc/zookeeper/conf/log4j.properties';

interface Server {
  readonly id: number;
  readonly clientPort: number;
  readonly quorumPorts: readonly [number, number];
  readonly process: ServerProcess;
}

export class ZooKeeperEnsemble {
  private constructor(readonly servers: readonly Server[]) {}

  static async start(dir: string, size = 3): Promise<ZooKeeperEnsemble> {
    const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
    const spec = Array.from({ length: size }, (_, i) => ({
      id: i + 1,
      clientPort: ports[3 * i]!,
      quorumPorts: [ports[3 * i + 1]!, ports[3 * i + 2]!] as const,
    }));
    const servers: Server[] = [];
    for (const s of spec) {
      const serverDir = join(dir, `zk${s.id}`);
      const dataDir = join(serverDir, 'data');
      await mkdir(dataDir, { recursive: true });
      await writeFile(join(dataDir, 'myid'), `${s.id}\n`);
      const config = join(serverDir, 'zoo.cfg');
      await writeFile(
        config,
        [
          'tickTime=2000',
          'initLimit=10',
          'syncLimit=5',
          `dataDir=${dataDir}`,
          `clientPort=${s.clientPort}`,
          'clientPortAddress=127.0.0.1',
          'admin.enableServer=false',
          '4lw.commands.whitelist=srvr,mntr,ruok',
          ...spec.map((o) => `server.${o.id}=127.0.0.1:${o.quorumPorts[0]}:${o.quorumPorts[1]}`),
          '',
        ].join('\n'),
      );
      const server = ServerProcess.spawn({
        name: `zk${s.id}`,
        command: 'java',
        dir: serverDir,
        args: [
          `-Dzookeeper.log.dir=${serverDir}`,
          '-Dzookeeper.root.logger=WARN,CONSOLE',
          `-Dlog4j.configuration=file:${LOG4J}`,
          '-cp',
          CLASSPATH,
          'org.apache.zookeeper.server.quorum.QuorumPeerMain',
          config,
        ],
      });
      servers.push({ ...s, process: server });
    }
    const ensemble = new ZooKeeperEnsemble(servers);
    try {
      for (const server of servers) {
        await server.process.waitUntil('a quorum', async () => /Mode: (leader|follower)/.test(await fourLetterWord(server.clientPort, 'srvr')), 60_000);
      }
    } catch (error) {
      await ensemble.stop();
      throw error;
    }
    return ensemble;
  }

  /** host:port,host:port,... as ZooKeeper clients take it. */
  get connectString(): string {
    return this.servers.map((s) => `127.0.0.1:${s.clientPort}`).join(',');
  }

  /** The index of the server in leader mode; -1 while there is none. */
  async leaderIndex(): Promise<number> {
    for (const [index, server] of this.servers.entries()) {
      if (!server.process.alive) continue;
      const answer = await fourLetterWord(server.clientPort, 'srvr').catch(() => '');
      if (/Mode: (leader|standalone)/.test(answer)) return index;
    }
    return -1;
  }

  /** Transaction-log fsyncs of every live server so far (mntr's zk_cnt_fsynctime). */
  async fsyncs(): Promise<number> {
    let total = 0;
    for (const server of this.servers) {
      if (!server.process.alive) continue;
      const mntr = await fourLetterWord(server.clientPort, 'mntr').catch(() => '');
      total += Number(/^zk_cnt_fsynctime\s+(\S+)$/m.exec(mntr)?.[1] ?? 0);
    }
    return total;
  }

  pids(): number[] {
    return this.servers.filter((s) => s.process.alive).map((s) => s.process.pid);
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.process.stop('SIGTERM')));
    for (const s of this.servers) for (const port of [s.clientPort, ...s.quorumPorts]) releasePort(port);
  }
}

/** One four-letter-word command to a server's client port; resolves to its whole answer. */
export function fourLetterWord(port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => socket.destroy(new Error(`${word}: no answer in ${timeoutMs} ms`)), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}
