/**
 * The floor: what any correct lock must send, with nothing around it.
 * Acquire is `SET key value NX PX ttl` on every node at once, granted as soon
 * as a majority said OK; release is a compare-and-delete script by EVALSHA on
 * every node, done as soon as a majority answered (like the libraries, it does
 * not wait for the slowest node). Under contention it polls every 1-3 ms (no
 * backoff, no fairness): a naive loop, not a floor there; read its contended
 * rows as a reference only. The same cycle on node-redis clients
 * (`raw-node-redis`, measured when named) is the floor of that client.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { ClientKind, NodeRedisClient } from '../clients.js';
import type { BenchLocker, Contender, HeldLock } from './types.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const POLL_MIN_MS = 1;
const POLL_JITTER_MS = 2;
/** Same acquire window as the libraries' defaults. */
const ACQUIRE_TIMEOUT_MS = 10_000;

/** The two commands of the cycle, on one kind of client, as its users send them. */
interface RawCommands {
  set(client: Redis, key: string, value: string, ttlMs: number): Promise<unknown>;
  evalsha(client: Redis, sha: string, key: string, value: string): Promise<unknown>;
  eval(client: Redis, key: string, value: string): Promise<unknown>;
}

const ON_IOREDIS: RawCommands = {
  set: (client, key, value, ttlMs) => client.set(key, value, 'PX', ttlMs, 'NX'),
  evalsha: (client, sha, key, value) => client.evalsha(sha, 1, key, value),
  eval: (client, key, value) => client.eval(RELEASE, 1, key, value),
};

/** The clients are node-redis ones there (ClientGroup). */
const nodeRedis = (client: Redis): NodeRedisClient => client as unknown as NodeRedisClient;
const ON_NODE_REDIS: RawCommands = {
  set: (client, key, value, ttlMs) => nodeRedis(client).sendCommand(['SET', key, value, 'PX', String(ttlMs), 'NX']),
  evalsha: (client, sha, key, value) => nodeRedis(client).sendCommand(['EVALSHA', sha, '1', key, value]),
  eval: (client, key, value) => nodeRedis(client).sendCommand(['EVAL', RELEASE, '1', key, value]),
};

export const raw: Contender = rawOn('ioredis');

/** The floor of the node-redis entrants (nodeRedis.ts), measured when named. */
export const rawOnNodeRedis: Contender = rawOn('node-redis');

function rawOn(kind: ClientKind): Contender {
  const onNodeRedis = kind === 'node-redis';
  const commands = onNodeRedis ? ON_NODE_REDIS : ON_IOREDIS;
  return {
    library: onNodeRedis ? 'raw-node-redis' : 'raw',
    variant: 'defaults',
    role: 'floor',
    ...(onNodeRedis ? { client: kind, onlyWhenNamed: true } : {}),
    settings: `${onNodeRedis ? 'node-redis 6 clients; ' : ''}SET NX PX on all nodes + EVALSHA compare-and-delete; polls every 1-3 ms when held`,
    className: (nodeCount) => (nodeCount === 1 ? 'SET NX + EVALSHA' : `SET NX ×${nodeCount} + EVALSHA ×${nodeCount}`),
    create: (clients) => rawLocker(clients, commands),
  };
}

function rawLocker(clients: readonly Redis[], commands: RawCommands): BenchLocker {
  const quorum = Math.floor(clients.length / 2) + 1;
  const release = new ReleaseScript(commands);
  const releaseAll = (targets: readonly Redis[], key: string, value: string): Promise<unknown> =>
    Promise.all(targets.map((client) => release.run(client, key, value)));

  const tryOnce = async (key: string, value: string, ttlMs: number): Promise<boolean> => {
    const replies = clients.map((client) => commands.set(client, key, value, ttlMs));
    if (await majority(replies, quorum, (reply) => reply === 'OK')) return true;
    // Lost: undo wherever our SET landed, once every node has answered.
    const settled = await Promise.all(replies);
    const won = clients.filter((_, index) => settled[index] === 'OK');
    if (won.length > 0) await releaseAll(won, key, value);
    return false;
  };

  return {
    async acquire(key, ttlMs, signal) {
      const value = randomUUID();
      const deadline = performance.now() + ACQUIRE_TIMEOUT_MS;
      for (;;) {
        if (await tryOnce(key, value, ttlMs)) {
          const held: HeldLock = {
            release: () => majority(clients.map((client) => release.run(client, key, value)), quorum, () => true),
          };
          return held;
        }
        if (signal.aborted || performance.now() >= deadline) return null;
        await sleep(POLL_MIN_MS + Math.random() * POLL_JITTER_MS);
      }
    },
  };
}

/**
 * True once `quorum` replies pass `ok`, false once that can no longer happen
 * (a rejection counts as a failed reply); the rest may still be in flight.
 */
function majority<T>(replies: readonly Promise<T>[], quorum: number, ok: (reply: T) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    let yes = 0;
    let no = 0;
    const count = (passed: boolean): void => {
      if (passed) yes++;
      else no++;
      if (yes === quorum) resolve(true);
      else if (no === replies.length - quorum + 1) resolve(false);
    };
    for (const reply of replies) reply.then((value) => count(ok(value)), () => count(false));
  });
}

/** EVALSHA, with the script sent once in full on NOSCRIPT (a fresh or flushed node). */
class ReleaseScript {
  private readonly sha = createHash('sha1').update(RELEASE).digest('hex');

  constructor(private readonly commands: RawCommands) {}

  async run(client: Redis, key: string, value: string): Promise<unknown> {
    try {
      return await this.commands.evalsha(client, this.sha, key, value);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.commands.eval(client, key, value);
    }
  }
}
