import { toNodes } from '../redlock/Redlock.js';
import type { LockClient } from '../node/backendFor.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './options.js';
import { SemaphoreCoordinator } from './SemaphoreCoordinator.js';

/**
 * A counting semaphore over N independent Redis nodes: each permit slot is a
 * Redlock mutex, taken on a majority with validity left after drift, so no
 * arrival order lets more than `limit` permits be held (see the README).
 */
export class RedlockSemaphore extends SemaphoreCoordinator {
  constructor(clients: readonly LockClient[], options: SemaphoreOptions) {
    const { limit, settings } = resolveSemaphoreOptions(options);
    super(toNodes(clients, settings.clock), settings, limit);
  }
}
