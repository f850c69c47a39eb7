/**
 * One Postgres server on loopback, in a folder of its own, with Debian's
 * postgresql (15) binaries and its shipped durability: fsync = on,
 * synchronous_commit = on, so a committed transaction's WAL is fsynced.
 * Advisory locks live in shared memory and write no WAL: taking one costs no
 * fsync (the bench counts pg_stat_wal's wal_sync to show it). Postgres
 * refuses to run as root: initdb and the server run as the `postgres` user
 * Debian's package creates, in a folder handed to that user.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, releasePort } from '../../../test/support/freePort.js';
import { ServerProcess } from './serverProcess.js';

const PG_ROOT = '/usr/lib/postgresql';
/** 64 holders in one process and 8 × 8 across processes, with room for the bench's own. */
const MAX_CONNECTIONS = 300;

/** The newest installed Postgres's bin folder, or undefined. */
export function postgresBin(): string | undefined {
  try {
    const versions = readdirSync(PG_ROOT).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    return versions[0] === undefined ? undefined : join(PG_ROOT, versions[0], 'bin');
  } catch {
    return undefined;
  }
}

export class PostgresServer {
  private constructor(
    readonly port: number,
    readonly process: ServerProcess,
  ) {}

  static async start(dir: string): Promise<PostgresServer> {
    const bin = postgresBin();
    if (bin === undefined) throw new Error(`no Postgres under ${PG_ROOT}: run scripts/setup-systems.sh`);
    const root = process.getuid?.() === 0;
    const user = root ? 'postgres' : undefined;
    const serverDir = join(dir, 'postgres');
    const dataDir = join(serverDir, 'data');
    await mkdir(serverDir, { recursive: true });
    if (root) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      await chown(dir, uid, gid);
      await chown(serverDir, uid, gid);
    }
    // --no-sync: initdb does not fsync the files it creates (a throwaway folder); the server's own settings stay as shipped.
    const asUser = root ? ['setpriv', '--reuid', 'postgres', '--regid', 'postgres', '--init-groups', '--'] : [];
    const initdb = [...asUser, join(bin, 'initdb'), '-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'];
    execFileSync(initdb[0]!, initdb.slice(1), { stdio: 'pipe' });
    const port = await freePort();
    const server = ServerProcess.spawn({
      name: 'postgres',
      command: join(bin, 'postgres'),
      dir: serverDir,
      user,
      args: ['-D', dataDir, '-p', String(port), '-k', serverDir, '-c', 'listen_addresses=127.0.0.1', '-c', `max_connections=${MAX_CONNECTIONS}`],
    });
    const postgres = new PostgresServer(port, server);
    try {
      await server.waitUntil('accepting connections', async () => {
        const client = postgres.client();
        await client.connect();
        await client.end();
        return true;
      });
    } catch (error) {
      await postgres.stop();
      throw error;
    }
    return postgres;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  client(): pg.Client {
    return new pg.Client({ connectionString: this.url });
  }

  /** WAL fsyncs so far (pg_stat_wal.wal_sync). */
  async fsyncs(): Promise<number> {
    const client = this.client();
    await client.connect();
    try {
      const { rows } = await client.query<{ wal_sync: string }>('SELECT wal_sync FROM pg_stat_wal');
      return Number(rows[0]?.wal_sync ?? 0);
    } finally {
      await client.end();
    }
  }

  pids(): number[] {
    return this.process.alive ? [this.process.pid] : [];
  }

  /** SIGINT: Postgres's fast shutdown. */
  async stop(): Promise<void> {
    await this.process.stop('SIGINT');
    releasePort(this.port);
  }
}
