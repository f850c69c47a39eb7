/**
 * The floor: what any correct lock must send, with nothing around it.
 * Acquire is `SET key value NX PX ttl` on every node at once, granted as soon
 * as a majority said OK; release is a compare-and-delete script by EVALSHA on
 * every node, done as soon as a majority answered (like the libraries, it does
 * not wait for the slowest node). Under contention it polls every 1-3 ms (no
 * backoff, no fairness): a naive loop, not a floor there; read its contended
 * rows as a reference only.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { BenchLocker, Contender, HeldLock } from './types.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const POLL_MIN_MS = 1;
const POLL_JITTER_MS = 2;
/** Same acquire window as the libraries' defaults. */
const ACQUIRE_TIMEOUT_MS = 10_000;

export const raw: Contender = {
  library: 'raw',
  variant: 'defaults',
  role: 'floor',
  settings: 'SET NX PX on all nodes + EVALSHA compare-and-delete; polls every 1-3 ms when held',
  className: (nodeCount) => (nodeCount === 1 ? 'SET NX + EVALSHA' : `SET NX ×${nodeCount} + EVALSHA ×${nodeCount}`),
  create(clients): BenchLocker {
    const quorum = Math.floor(clients.length / 2) + 1;
    const release = new ReleaseScript();
    const releaseAll = (targets: readonly Redis[], key: string, value: string): Promise<unknown> =>
      Promise.all(targets.map((client) => release.run(client, key, value)));

    const tryOnce = async (key: string, value: string, ttlMs: number): Promise<boolean> => {
      const replies = clients.map((client) => client.set(key, value, 'PX', ttlMs, 'NX'));
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
  },
};

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

  async run(client: Redis, key: string, value: string): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, 1, key, value);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(RELEASE, 1, key, value);
    }
  }
}
