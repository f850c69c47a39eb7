/**
 * A 3-member etcd cluster on loopback, in a folder of its own, as Debian's
 * etcd-server 3.4 ships it: every write is fsynced to each member's WAL
 * before it is acknowledged (etcd has no switch to turn that off, short of
 * --unsafe-no-fsync, which 3.4 lacks).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort, releasePort } from '../../../test/support/freePort.js';
import { ServerProcess } from './serverProcess.js';

interface Member {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly process: ServerProcess;
}

export class EtcdCluster {
  private constructor(readonly members: readonly Member[]) {}

  static async start(dir: string, size = 3): Promise<EtcdCluster> {
    const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()));
    const spec = Array.from({ length: size }, (_, i) => ({
      name: `etcd${i}`,
      clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
      peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
    }));
    const initialCluster = spec.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const token = `qlbench-${process.pid}-${Date.now()}`;
    const members: Member[] = [];
    for (const m of spec) {
      const memberDir = join(dir, m.name);
      await mkdir(memberDir, { recursive: true });
      const server = ServerProcess.spawn({
        name: m.name,
        command: 'etcd',
        dir: memberDir,
        args: [
          '--name', m.name,
          '--data-dir', join(memberDir, 'data'),
          '--listen-client-urls', m.clientUrl,
          '--advertise-client-urls', m.clientUrl,
          '--listen-peer-urls', m.peerUrl,
          '--initial-advertise-peer-urls', m.peerUrl,
          '--initial-cluster', initialCluster,
          '--initial-cluster-state', 'new',
          '--initial-cluster-token', token,
          '--logger', 'zap',
          '--log-level', 'warn',
        ],
      });
      members.push({ ...m, process: server });
    }
    const cluster = new EtcdCluster(members);
    try {
      for (const member of members) {
        await member.process.waitUntil('a healthy member', async () => (await fetch(`${member.clientUrl}/health`)).ok);
      }
      await members[0]!.process.waitUntil('a leader', async () => (await cluster.leaderIndex()) >= 0);
    } catch (error) {
      await cluster.stop();
      throw error;
    } finally {
      // The ports stay claimed while the members run; releasing happens in stop().
    }
    return cluster;
  }

  get endpoints(): string[] {
    return this.members.map((m) => m.clientUrl);
  }

  /** The index of the member that leads, as the live members see it; -1 while there is none. */
  async leaderIndex(): Promise<number> {
    for (const member of this.members) {
      if (!member.process.alive) continue;
      const client = new Etcd3({ hosts: member.clientUrl, dialTimeout: 1000 });
      try {
        const status = await client.maintenance.status();
        if (status.leader === '0') continue;
        for (const [index, other] of this.members.entries()) {
          if (!other.process.alive) continue;
          const probe = new Etcd3({ hosts: other.clientUrl, dialTimeout: 1000 });
          try {
            if ((await probe.maintenance.status()).header.member_id === status.leader) return index;
          } finally {
            probe.close();
          }
        }
      } catch {
        // this member does not answer: ask the next
      } finally {
        client.close();
      }
    }
    return -1;
  }

  /** WAL fsyncs and backend commits (each an fsync) of every live member so far, from its /metrics. */
  async fsyncs(): Promise<number> {
    let total = 0;
    for (const member of this.members) {
      if (!member.process.alive) continue;
      const text = await (await fetch(`${member.clientUrl}/metrics`)).text();
      for (const name of ['etcd_disk_wal_fsync_duration_seconds_count', 'etcd_disk_backend_commit_duration_seconds_count']) {
        const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
        total += Number(value ?? 0);
      }
    }
    return total;
  }

  pids(): number[] {
    return this.members.filter((m) => m.process.alive).map((m) => m.process.pid);
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.process.stop('SIGTERM')));
    for (const m of this.members) {
      releasePort(Number(new URL(m.clientUrl).port));
      releasePort(Number(new URL(m.peerUrl).port));
    }
  }
}
