/**
 * The semaphores the negative controls must catch, written here for the
 * purpose (test-only, never shipped):
 * - ClientClockSemaphore scores holders with the client's clock, as
 *   redis-semaphore's Semaphore does with Date.now(): a client whose clock
 *   runs ahead prunes live holders as expired.
 * - countingMajority: every node admits up to `limit` holders and a majority
 *   of admitting nodes grants, as redis-semaphore's RedlockSemaphore does.
 */
import type { Redis } from 'ioredis';

// KEYS[1] the holders' set; ARGV: holder id, client now (ms), TTL (ms), limit.
// Prunes holders the client's clock says expired, then admits if under the limit.
const CLIENT_CLOCK_ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

export class ClientClockSemaphore {
  constructor(
    private readonly client: Redis,
    private readonly limit: number,
    /** How far this client's clock runs ahead of the others, in ms. */
    private readonly clockAheadMs: number,
  ) {}

  /** True when admitted; the holder then believes it holds for `ttlMs` on its own clock. */
  async tryAcquire(key: string, id: string, ttlMs: number): Promise<boolean> {
    const now = Date.now() + this.clockAheadMs;
    return (await this.client.eval(CLIENT_CLOCK_ACQUIRE, 1, key, id, now, ttlMs, this.limit)) === 1;
  }
}

// KEYS[1] the holders' set; ARGV: holder id, TTL (ms), limit. Admits up to `limit` holders.
const COUNTING_ACQUIRE = `
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** True when a majority of `nodes` admitted `id`, each counting up to `limit` holders. */
export async function countingMajority(nodes: readonly Redis[], key: string, id: string, ttlMs: number, limit: number): Promise<boolean> {
  const admitted = await Promise.all(nodes.map((node) => node.eval(COUNTING_ACQUIRE, 1, key, id, ttlMs, limit).then((r) => r === 1, () => false)));
  return admitted.filter(Boolean).length >= Math.floor(nodes.length / 2) + 1;
}
