import type { LockClient } from '../node/backendFor.js';
import { backendFor } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './options.js';
import { SemaphoreCoordinator } from './SemaphoreCoordinator.js';

/**
 * A counting semaphore on one Redis server (or one Redis Cluster): at most
 * `limit` permits of a resource are held at once. The quorum engine with one
 * node, so it has the mutex's validity accounting and typed errors.
 */
export class RedisSemaphore extends SemaphoreCoordinator {
  /**
   * @param client - The node's client: ioredis, node-redis or Valkey GLIDE.
   * @param options - The `limit` (required), and a locker's options.
   * @throws {@link InvalidArgumentError} for a client quorumlock does not know,
   * a missing or bad `limit`, or a bad option.
   */
  constructor(client: LockClient, options: SemaphoreOptions) {
    const backend = backendFor(client, 'client');
    const { limit, settings } = resolveSemaphoreOptions(options);
    super([new LockNode(backend, settings.clock)], settings, limit);
  }
}
