import type { LockClient } from '../node/backendFor.js';
import { backendFor } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './options.js';
import { SemaphoreCoordinator } from './SemaphoreCoordinator.js';

/** A counting semaphore on one Redis server (or one Redis Cluster): the quorum engine with one node. */
export class RedisSemaphore extends SemaphoreCoordinator {
  constructor(client: LockClient, options: SemaphoreOptions) {
    const backend = backendFor(client, 'client');
    const { limit, settings } = resolveSemaphoreOptions(options);
    super([new LockNode(backend, settings.clock)], settings, limit);
  }
}
