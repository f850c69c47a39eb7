import type { LockClient } from '../node/backendFor.js';
import { backendFor } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { type ReadWriteLockOptions, resolveReadWriteOptions } from './options.js';
import { ReadWriteLock } from './ReadWriteLock.js';

/**
 * A read-write lock on one Redis server (or one Redis Cluster): any number of
 * readers, or one writer, per resource. Take a side with `read` or `write`.
 */
export class RedisReadWriteLock extends ReadWriteLock {
  /**
   * @param client - The node's client: ioredis, node-redis or Valkey GLIDE.
   * @param options - A locker's options, and `writerClaimMs`.
   * @throws {@link InvalidArgumentError} for a client quorumlock does not know, or a bad option.
   */
  constructor(client: LockClient, options?: ReadWriteLockOptions) {
    const backend = backendFor(client, 'client');
    const resolved = resolveReadWriteOptions(options);
    super([new LockNode(backend, resolved.settings.clock)], resolved);
  }
}
