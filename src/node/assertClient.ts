import { InvalidArgumentError } from '../shared/errors.js';
import { describe } from '../shared/describe.js';
import type { ClientAdapter } from './ClientAdapter.js';
import { type IoredisClient, ioredisAdapter, isIoredisClient } from './adapters/ioredis.js';
import { type GlideClient, glideAdapter, isGlideClient } from './adapters/glide.js';
import { isNodeRedisClient, type NodeRedisClient, nodeRedisAdapter } from './adapters/nodeRedis.js';

/**
 * A client users pass for one node: ioredis (Redis, Cluster, Sentinel-managed
 * Redis), node-redis (createClient, createCluster, createSentinel) or Valkey
 * GLIDE. Each is recognized by its shape: quorumlock imports none of them.
 */
export type RedisClient = IoredisClient | NodeRedisClient | GlideClient;

const SUPPORTED =
  'an ioredis client (Redis or Cluster), a node-redis client (createClient, createCluster or createSentinel) or a Valkey GLIDE client';

export function isClient(value: unknown): value is RedisClient {
  return isIoredisClient(value) || isNodeRedisClient(value) || isGlideClient(value);
}

/** The adapter for `client`; throws InvalidArgumentError naming what was passed when it is no client quorumlock knows. */
export function adapterFor(client: unknown, argument: string): ClientAdapter {
  if (isIoredisClient(client)) return ioredisAdapter(client);
  if (isNodeRedisClient(client)) return nodeRedisAdapter(client);
  if (isGlideClient(client)) return glideAdapter(client);
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
