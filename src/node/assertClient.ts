import { InvalidArgumentError } from '../lock/errors.js';
import { describe } from '../lock/validate.js';
import type { ClientAdapter } from './ClientAdapter.js';
import { type IoredisClient, ioredisAdapter, isIoredisClient } from './adapters/ioredis.js';
import { isNodeRedisClient, type NodeRedisClient, nodeRedisAdapter } from './adapters/nodeRedis.js';

/**
 * A client users pass for one node: ioredis (Redis, Cluster, Sentinel-managed
 * Redis) or node-redis (createClient, createCluster, createSentinel). Each is
 * recognized by its shape: quorumlock imports neither package.
 */
export type RedisClient = IoredisClient | NodeRedisClient;

const SUPPORTED = 'an ioredis client (Redis or Cluster) or a node-redis client (createClient, createCluster or createSentinel)';

export function isClient(value: unknown): value is RedisClient {
  return isIoredisClient(value) || isNodeRedisClient(value);
}

/** The adapter for `client`; throws InvalidArgumentError naming what was passed when it is no client quorumlock knows. */
export function adapterFor(client: unknown, argument: string): ClientAdapter {
  if (isIoredisClient(client)) return ioredisAdapter(client);
  if (isNodeRedisClient(client)) return nodeRedisAdapter(client);
  throw new InvalidArgumentError(argument, `expected ${SUPPORTED}, got ${describeCandidate(client)}`);
}

export function assertClient(client: unknown, argument: string): asserts client is RedisClient {
  if (!isClient(client)) adapterFor(client, argument);
}

function describeCandidate(client: unknown): string {
  // Covers new RedisLock([a, b]) and new Redlock([clients]) alike.
  if (Array.isArray(client) && client.some(isClient)) return 'an array of clients (for several nodes: new Redlock(clients))';
  return describe(client);
}
