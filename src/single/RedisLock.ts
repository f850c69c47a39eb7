import { type LockerOptions, resolveLockerOptions } from '../lock/options.js';
import { backendFor, type LockClient } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { QuorumCoordinator } from '../redlock/QuorumCoordinator.js';

/** Options of RedisLock: a locker's options ({@link LockerOptions}). */
export type RedisLockOptions = LockerOptions;

/**
 * A lock on one Redis server (or one Redis Cluster). It is the Redlock
 * algorithm with one node, so it keeps the same validity accounting, typed
 * errors and compare-and-delete release; it only cannot survive that node's
 * failover without losing mutual exclusion (see the safety and failover guides).
 */
export class RedisLock extends QuorumCoordinator {
  /**
   * @param client - The node's client: ioredis (Redis, Cluster or
   * Sentinel-managed), node-redis (createClient, createCluster,
   * createSentinel), Valkey GLIDE, or an InMemoryNode from quorumlock/testing.
   * Connected or still connecting.
   * @param options - Drift, timeouts, retry, fencing, wake-up, reentrancy, replica sync, clock.
   * @throws {@link InvalidArgumentError} for a value that is no client quorumlock knows, or a bad option.
   */
  constructor(client: LockClient, options?: RedisLockOptions) {
    const backend = backendFor(client, 'client');
    const settings = resolveLockerOptions(options);
    super([new LockNode(backend, settings.clock)], settings);
  }
}
