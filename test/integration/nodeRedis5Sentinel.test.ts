/**
 * A node-redis 5 Sentinel client passed to a locker while it connects: it
 * announces neither that it is ready nor that it was closed (5.12 emits no
 * 'ready', 'connect' or 'end'), so the locker looks at it while a call waits.
 */
import { createSentinel } from 'redis5';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, isQuorumLockError, QuorumUnreachableError, type RedisClient, RedisLock } from '../../src/index.js';
import { SentinelGroup } from '../support/SentinelGroup.js';

let group: SentinelGroup;
beforeAll(async () => {
  group = await SentinelGroup.start({ replicas: 1 });
});
afterAll(() => group?.stop());

/** A client of the group whose connect() has been called and not awaited, as a user may pass it. */
function connectingClient(): ReturnType<typeof createSentinel> {
  const client = createSentinel({ name: group.name, sentinelRootNodes: group.sentinelAddresses });
  client.on('error', () => undefined);
  client.connect().catch(() => undefined);
  return client;
}

describe('a node-redis 5 Sentinel client passed while it connects', () => {
  it('takes the first call once it is ready, not when the call times out', async () => {
    const client = connectingClient();
    try {
      expect(client.isReady).toBe(false);
      // Ready after ~250 ms here; before the locker looked, the call waited out its acquireTimeoutMs and failed.
      const lock = await new RedisLock(client as unknown as RedisClient).acquire('orders:1', 10_000, { acquireTimeoutMs: 8000 });
      expect(await client.get('orders:1')).toBe(lock.value);
      await lock.release();
    } finally {
      await client.destroy();
    }
  });

  it('fails a waiting call as closed when the client is closed before it was ready, and leaves no timer', async () => {
    const started = vi.spyOn(globalThis, 'setInterval');
    const cleared = vi.spyOn(globalThis, 'clearInterval');
    try {
      const client = connectingClient();
      const attempt = new RedisLock(client as unknown as RedisClient).acquire('orders:2', 10_000, { acquireTimeoutMs: 300 }).catch((error: unknown) => error);
      await client.destroy();
      const error = await attempt;
      expect(error).toBeInstanceOf(QuorumUnreachableError);
      const cause = (error as QuorumUnreachableError).outcomes[0]?.error;
      expect(isQuorumLockError(cause, ErrorCode.NODE_CONNECTION)).toBe(true);
      // Heard as closed (the look found it so), not left 'still connecting' until the call timed out.
      expect(cause?.message).toContain('the connection was closed');
      const polls = started.mock.results.filter((_, i) => started.mock.calls[i]?.[1] === 10).map((result) => result.value as unknown);
      expect(polls).toHaveLength(1);
      await expect.poll(() => cleared.mock.calls.some(([timer]) => timer === polls[0]), { timeout: 2000 }).toBe(true);
    } finally {
      started.mockRestore();
      cleared.mockRestore();
    }
  });
});
