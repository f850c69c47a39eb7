import { adapterFor, isClient, type RedisClient } from './assertClient.js';
import { IN_MEMORY_NODE, type InMemoryBackend, type NodeBackend } from './NodeBackend.js';
import { RedisNodeBackend } from './RedisNodeBackend.js';

/** What lockers take for one node: a Redis client, or an in-memory node (quorumlock/testing). */
export type LockClient = RedisClient | InMemoryBackend;

export function isLockClient(value: unknown): value is LockClient {
  return isInMemoryBackend(value) || isClient(value);
}

/** The node layer for `client`; throws InvalidArgumentError naming what was passed when it is neither. */
export function backendFor(client: unknown, argument: string): NodeBackend {
  if (isInMemoryBackend(client)) return client;
  return new RedisNodeBackend(adapterFor(client, argument));
}

function isInMemoryBackend(value: unknown): value is InMemoryBackend {
  return typeof value === 'object' && value !== null && (value as Partial<InMemoryBackend>)[IN_MEMORY_NODE] === true;
}
