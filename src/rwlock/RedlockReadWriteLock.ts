import type { LockClient } from '../node/backendFor.js';
import { toNodes } from '../redlock/Redlock.js';
import { type ReadWriteLockOptions, resolveReadWriteOptions } from './options.js';
import { ReadWriteLock } from './ReadWriteLock.js';

/**
 * A read-write lock over N independent Redis nodes: a reader or the writer
 * holds on a majority with validity left after drift. A writer and a reader
 * cannot both hold a majority: the two share a node, whose script admits
 * either a writer's key or live readers, never both.
 */
export class RedlockReadWriteLock extends ReadWriteLock {
  /**
   * @param clients - One client per independent node (not replicas of each other).
   * @param options - A locker's options, and `writerClaimMs`.
   * @throws {@link InvalidArgumentError} for an empty array, a client given
   * twice, a client quorumlock does not know, or a bad option.
   */
  constructor(clients: readonly LockClient[], options?: ReadWriteLockOptions) {
    const resolved = resolveReadWriteOptions(options);
    super(toNodes(clients, resolved.settings.clock), resolved);
  }
}
