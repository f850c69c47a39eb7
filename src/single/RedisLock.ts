import { type LockerOptions, resolveLockerOptions } from '../lock/options.js';
import { backendFor, type LockClient } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { QuorumCoordinator } from '../redlock/QuorumCoordinator.js';

export type RedisLockOptions = LockerOptions;

/**
 * A lock on one Redis server (or one Redis Cluster). It is the Redlock
 * algorithm with one node, so it keeps the same validity accounting, typed
 * errors and compare-and-delete release; it only cannot survive that node's
 * failover without losing mutual exclusion (see the README's safety notes).
 */
export class RedisLock extends QuorumCoordinator {
  constructor(client: LockClient, options?: RedisLockOptions) {
    const backend = backendFor(client, 'client');
    const settings = resolveLockerOptions(options);
    super([new LockNode(backend, settings.clock)], settings);
  }
}
