import { assertClient } from '../node/assertClient.js';
import { LockNode } from '../node/LockNode.js';
import { type RedisClient, RedisNodeBackend } from '../node/RedisNodeBackend.js';
import { type ReadWriteLockOptions, resolveReadWriteOptions } from './options.js';
import { ReadWriteLock } from './ReadWriteLock.js';

/** A read-write lock on one Redis server (or one Redis Cluster). */
export class RedisReadWriteLock extends ReadWriteLock {
  constructor(client: RedisClient, options?: ReadWriteLockOptions) {
    assertClient(client, 'client');
    const resolved = resolveReadWriteOptions(options);
    super([new LockNode(new RedisNodeBackend(client), resolved.settings.clock)], resolved);
  }
}
