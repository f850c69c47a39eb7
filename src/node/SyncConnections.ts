import type { SyncConnection, SyncSource } from './ClientAdapter.js';
import type { NodeBackend, SyncedReply } from './NodeBackend.js';

/** Most connections one client opens for synced writes; beyond them, writes wait for the first one free. */
const MAX_CONNECTIONS = 16;
/**
 * How long a connection nobody used stays open: a burst reuses it, and a
 * process still exits by itself soon after (the timer is unref'd, and the
 * user's client ending closes them all at once).
 */
const LINGER_MS = 2000;

type Write<T> = (on: NodeBackend) => Promise<T>;
/** A sync connection's backend, which counts the scripts its client resent. */
type SyncBackend = NodeBackend & { readonly scriptResends: number };

interface Entry {
  readonly write: Write<unknown>;
  readonly resolve: (synced: SyncedReply<unknown>) => void;
  readonly reject: (error: unknown) => void;
}

/** A write sent, whose reply its WAIT's answer waits for. */
interface Sent {
  readonly written: Promise<unknown>;
  readonly resolve: Entry['resolve'];
  readonly reject: Entry['reject'];
}

/** The writes one WAIT covers: those sent on one connection in one tick, for the same replicas and timeout. */
interface Batch {
  readonly key: string;
  readonly replicas: number;
  readonly timeoutMs: number;
  readonly sent: Sent[];
}

interface Connection {
  readonly client: SyncConnection;
  readonly backend: SyncBackend;
  linger: NodeJS.Timeout | undefined;
}

/**
 * Connections of their own for writes that wait for replicas (Redis WAIT),
 * duplicated from the user's client with its options. WAIT blocks its
 * connection until the replicas answer or its timeout, which the server
 * notices only on its cron tick: on the user's connection every command
 * behind it, synced or not, would wait that long (with a replica down, all
 * of them failed at each stall). Here a WAIT holds only its own connection.
 *
 * The synced writes of one tick share a connection and one WAIT (it covers
 * every earlier write of its connection); a write that comes while every
 * connection's WAIT is out takes another connection, opened if needed.
 */
export class SyncConnections {
  readonly #source: SyncSource;
  readonly #backendFor: (connection: object) => SyncBackend;
  readonly #idle: Connection[] = [];
  #open = 0;
  /** Batches still taking writes in this tick, by replicas and timeout. */
  readonly #collecting = new Map<string, { batch: Batch; connection: Connection }>();
  /** Writes that found MAX_CONNECTIONS busy, in order. */
  #waiting: (Entry & { readonly replicas: number; readonly timeoutMs: number })[] = [];
  #listening = false;

  constructor(source: SyncSource, backendFor: (connection: object) => SyncBackend) {
    this.#source = source;
    this.#backendFor = backendFor;
  }

  /** Sends `write` on a sync connection, then WAIT for `replicas` behind it. */
  synced<T>(write: Write<T>, replicas: number, timeoutMs: number): Promise<SyncedReply<T>> {
    return new Promise<SyncedReply<unknown>>((resolve, reject) => {
      if (this.#source.ended()) {
        reject(new Error('Connection is closed.'));
        return;
      }
      const entry: Entry = { write, resolve, reject };
      const key = `${replicas}:${timeoutMs}`;
      const collecting = this.#collecting.get(key);
      if (collecting) {
        this.#add(collecting.batch, collecting.connection, entry);
        return;
      }
      const connection = this.#take();
      if (connection) this.#start(connection, { key, replicas, timeoutMs, sent: [] }, [entry]);
      else this.#waiting.push({ ...entry, replicas, timeoutMs });
    }) as Promise<SyncedReply<T>>;
  }

  #take(): Connection | undefined {
    const idle = this.#idle.pop();
    if (idle) {
      clearTimeout(idle.linger);
      idle.linger = undefined;
      return idle;
    }
    if (this.#open >= MAX_CONNECTIONS) return undefined;
    this.#listen();
    // A write made while this connection opens (or reopens) waits for it,
    // whatever the user's client does: the request's own deadline bounds the
    // wait, and a write that runs late is released after (LateWrites).
    const client = this.#source.open();
    this.#open++;
    return { client, backend: this.#backendFor(client.client), linger: undefined };
  }

  #start(connection: Connection, batch: Batch, entries: readonly Entry[]): void {
    this.#collecting.set(batch.key, { batch, connection });
    const resendsBefore = connection.backend.scriptResends;
    for (const entry of entries) this.#add(batch, connection, entry);
    process.nextTick(() => {
      this.#collecting.delete(batch.key);
      this.#wait(connection, batch, resendsBefore);
    });
  }

  #add(batch: Batch, connection: Connection, entry: Entry): void {
    let written: Promise<unknown>;
    try {
      written = entry.write(connection.backend);
    } catch (error) {
      written = Promise.reject(error);
    }
    batch.sent.push({ written, resolve: entry.resolve, reject: entry.reject });
  }

  /**
   * WAIT only covers writes of its own connection: a script resent after
   * NOSCRIPT runs behind the first WAIT, which is then sent again once the
   * writes have answered; and when the connection was replaced meanwhile
   * (ioredis resends an unanswered WAIT on the new one, where it waits for
   * nothing) the acknowledgement proves nothing and is not counted. A
   * connection still opening has no socket yet: what counts is that the
   * write and its WAIT were answered on the same one. Nor does a write
   * answered on another connection than the one it went out on: ioredis
   * sent it again after a reconnect, and its first run may have stood, so
   * a mutex's SET NX then finds our own key and says it is held (seen
   * under load, where the first reply was lost with the connection).
   */
  #wait(connection: Connection, batch: Batch, resendsBefore: number): void {
    const { client } = connection;
    const sentOn = client.mark();
    const writes = batch.sent.map(({ written }) =>
      written.then(
        (reply) => ({ reply, stream: client.mark() }),
        (error: unknown) => ({ error }),
      ),
    );
    // A failed WAIT (on a demoted master, say) still waits for the writes: a
    // write's outcome is not given before the write itself has answered, so
    // that the release of its lock can follow it (LateWrites).
    const acknowledged = client.wait(batch.replicas, batch.timeoutMs).then(
      (count) => ({ count }),
      (error: unknown) => ({ error }),
    );
    Promise.all([Promise.all(writes), acknowledged])
      .then(([replies, waited]) => {
        if ('error' in waited) throw waited.error;
        return connection.backend.scriptResends === resendsBefore
          ? { replies, count: waited.count }
          : client.wait(batch.replicas, batch.timeoutMs).then((again) => ({ replies, count: again }));
      })
      .then(
        ({ replies, count }) => {
          const stream = client.mark();
          batch.sent.forEach((sent, index) => {
            const written = replies[index] as { reply?: unknown; stream?: unknown; error?: unknown };
            if ('error' in written) sent.reject(written.error);
            else if (written.stream !== stream || (sentOn !== undefined && written.stream !== sentOn)) {
              sent.resolve({ reply: written.reply, acknowledged: count, connectionChanged: true });
            }
            else sent.resolve({ reply: written.reply, acknowledged: count });
          });
        },
        (error: unknown) => {
          for (const sent of batch.sent) sent.reject(error);
        },
      )
      .finally(() => this.#free(connection));
  }

  #free(connection: Connection): void {
    connection.client.idle?.();
    if (this.#source.ended()) {
      this.#close(connection);
      return;
    }
    const next = this.#waiting[0];
    if (next) {
      const key = `${next.replicas}:${next.timeoutMs}`;
      const taken = this.#waiting.filter((entry) => `${entry.replicas}:${entry.timeoutMs}` === key);
      this.#waiting = this.#waiting.filter((entry) => `${entry.replicas}:${entry.timeoutMs}` !== key);
      this.#start(connection, { key, replicas: next.replicas, timeoutMs: next.timeoutMs, sent: [] }, taken);
      return;
    }
    connection.linger = setTimeout(() => {
      const index = this.#idle.indexOf(connection);
      if (index >= 0) this.#idle.splice(index, 1);
      this.#close(connection);
    }, LINGER_MS);
    connection.linger.unref();
    this.#idle.push(connection);
  }

  #close(connection: Connection): void {
    clearTimeout(connection.linger);
    connection.client.close();
    this.#open--;
  }

  /** The user's client ending closes the idle connections at once, and the busy ones as their WAIT answers. */
  #listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    this.#source.onEnd(() => {
      for (const connection of this.#idle.splice(0)) this.#close(connection);
      for (const entry of this.#waiting.splice(0)) entry.reject(new Error('Connection is closed.'));
    });
  }
}
