import { type LockerOptions, resolveLockerOptions } from '../lock/options.js';
import { adapterFor, type RedisClient } from '../node/assertClient.js';
import { LockNode } from '../node/LockNode.js';
import { RedisNodeBackend } from '../node/RedisNodeBackend.js';
import { QuorumCoordinator } from '../redlock/QuorumCoordinator.js';

export type RedisLockOptions = LockerOptions;

/**
 * A lock on one Redis server (or one Redis Cluster). It is the Redlock
 * algorithm with one node, so it keeps the same validity accounting, typed
 * errors and compare-and-delete release; it only cannot survive that node's
 * failover without losing mutual exclusion (see the README's safety notes).
 */
export class RedisLock extends QuorumCoordinator {
  constructor(client: RedisClient, options?: RedisLockOptions) {
    const adapter = adapterFor(client, 'client');
    const settings = resolveLockerOptions(options);
    super([new LockNode(new RedisNodeBackend(adapter), settings.clock)], settings);
  }
}
