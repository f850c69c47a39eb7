import type { LockClient } from '../node/backendFor.js';
import { backendFor } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { type ReadWriteLockOptions, resolveReadWriteOptions } from './options.js';
import { ReadWriteLock } from './ReadWriteLock.js';

/** A read-write lock on one Redis server (or one Redis Cluster). */
export class RedisReadWriteLock extends ReadWriteLock {
  constructor(client: LockClient, options?: ReadWriteLockOptions) {
    const backend = backendFor(client, 'client');
    const resolved = resolveReadWriteOptions(options);
    super([new LockNode(backend, resolved.settings.clock)], resolved);
  }
}
