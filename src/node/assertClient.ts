import { InvalidArgumentError } from '../shared/errors.js';
import { describe } from '../shared/describe.js';
import type { RedisClient } from './RedisNodeBackend.js';

/** Anything that runs scripts like an ioredis Redis or Cluster client. */
export function isClient(value: unknown): value is RedisClient {
  const candidate = value as { evalsha?: unknown; eval?: unknown } | null | undefined;
  return typeof candidate?.evalsha === 'function' && typeof candidate.eval === 'function';
}

export function assertClient(client: unknown, argument: string): asserts client is RedisClient {
  if (isClient(client)) return;
  // Covers new RedisLock([a, b]) and new Redlock([clients]) alike.
  const got = Array.isArray(client) && client.some(isClient)
    ? 'an array of ioredis clients (for several nodes: new Redlock(clients))'
    : describe(client);
  throw new InvalidArgumentError(argument, `expected an ioredis Redis or Cluster client, got ${got}`);
}
