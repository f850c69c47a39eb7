/**
 * A lock command the library would write after the user's quit() is refused
 * instead (RedisNodeBackend, ClientAdapter.closing): written behind the QUIT,
 * it meets a socket the server is closing, and the write's EPIPE can fail the
 * connection before the QUIT's own reply is read, rejecting the user's
 * quit(). Seen in a docs example under load: a release following a late
 * write, written after the example's final quit().
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedisLock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;

beforeAll(async () => {
  nodes = await startNodes(1);
});
afterAll(async () => {
  await nodes.stopAll();
});

/** Counts what is written to the client's socket from now on. */
function countWrites(client: Redis): () => number {
  const stream = client.stream as unknown as { write: (...args: unknown[]) => boolean };
  const write = stream.write;
  let count = 0;
  stream.write = function (this: unknown, ...args: unknown[]) {
    count++;
    return write.apply(this, args);
  };
  return () => count;
}

describe("after the user's quit()", () => {
  it('writes no lock command behind the QUIT: the release is refused as a closed connection, and quit() resolves', async () => {
    const [client] = nodes.clients() as [Redis];
    await client.ping();
    const locker = new RedisLock(client);
    const lock = await locker.acquire('quit:order', 30_000);
    const quitting = client.quit();
    const writes = countWrites(client);
    const released = await lock.release();
    expect(released.released).toBe(0);
    expect(released.outcomes.map((outcome) => outcome.error)).toEqual([expect.objectContaining({ code: ErrorCode.NODE_CONNECTION })]);
    expect(writes()).toBe(0);
    await expect(quitting).resolves.toBe('OK');
  });
});
