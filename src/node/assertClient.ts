import { InvalidArgumentError } from '../lock/errors.js';
import { describe } from '../lock/validate.js';
import type { RedisClient } from './RedisNodeBackend.js';

/** Accepts anything that runs scripts like an ioredis Redis or Cluster client. */
export function assertClient(client: unknown, argument: string): asserts client is RedisClient {
  const candidate = client as { evalsha?: unknown; eval?: unknown } | null | undefined;
  if (typeof candidate?.evalsha !== 'function' || typeof candidate.eval !== 'function') {
    throw new InvalidArgumentError(argument, `expected an ioredis Redis or Cluster client, got ${describe(client)}`);
  }
}
