import { toNodes } from '../redlock/Redlock.js';
import type { LockClient } from '../node/backendFor.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './options.js';
import { SemaphoreCoordinator } from './SemaphoreCoordinator.js';

/**
 * A counting semaphore over N independent Redis nodes: each permit slot is a
 * Redlock mutex, taken on a majority with validity left after drift, so no
 * arrival order lets more than `limit` permits be held (see the semaphore
 * and safety guides).
 */
export class RedlockSemaphore extends SemaphoreCoordinator {
  /**
   * @param clients - One client per independent node (not replicas of each other).
   * @param options - The `limit` (required), and a locker's options.
   * @throws {@link InvalidArgumentError} for an empty array, a client given
   * twice, a client quorumlock does not know, a missing or bad `limit`, or a bad option.
   */
  constructor(clients: readonly LockClient[], options: SemaphoreOptions) {
    const { limit, settings } = resolveSemaphoreOptions(options);
    super(toNodes(clients, settings.clock), settings, limit);
  }
}
