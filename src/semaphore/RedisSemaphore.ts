import { assertClient } from '../node/assertClient.js';
import { LockNode } from '../node/LockNode.js';
import { type RedisClient, RedisNodeBackend } from '../node/RedisNodeBackend.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './options.js';
import { SemaphoreCoordinator } from './SemaphoreCoordinator.js';

/** A counting semaphore on one Redis server (or one Redis Cluster): the quorum engine with one node. */
export class RedisSemaphore extends SemaphoreCoordinator {
  constructor(client: RedisClient, options: SemaphoreOptions) {
    assertClient(client, 'client');
    const { limit, settings } = resolveSemaphoreOptions(options);
    super([new LockNode(new RedisNodeBackend(client), settings.clock)], settings, limit);
  }
}
