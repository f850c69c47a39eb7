/**
 * Postgres's session-level advisory locks through `pg`, one connection per
 * holder (an advisory lock belongs to the connection that took it):
 * pg_advisory_lock waits in the server's lock queue, pg_try_advisory_lock
 * answers at once. A name becomes the 64-bit key with hashtextextended, as
 * users map names to advisory keys. A dead holder's locks go the moment the
 * server sees its connection close.
 */
import pg from 'pg';
import type { Held, Holder, LockSystem } from './types.js';

export interface PostgresHolder extends Holder {
  /** pg_try_advisory_lock: the lock, or undefined when another connection holds it. */
  tryAcquire(name: string): Promise<Held | undefined>;
}

export interface PostgresSystem extends LockSystem {
  holder(): Promise<PostgresHolder>;
}

export async function openPostgres(url: string): Promise<PostgresSystem> {
  const clients: pg.Client[] = [];
  return {
    async holder() {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
      clients.push(client);
      const release = async (name: string) => void (await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]));
      return {
        async acquire(name) {
          await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
          return { release: () => release(name) };
        },
        async tryAcquire(name) {
          const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [name]);
          return rows[0]?.locked === true ? { release: () => release(name) } : undefined;
        },
      };
    },
    async close() {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    },
  };
}
