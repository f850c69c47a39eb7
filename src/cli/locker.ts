import type { Redis } from 'ioredis';
import { Redlock } from '../redlock/Redlock.js';
import { RedisLock } from '../single/RedisLock.js';

export interface LockerChoice {
  readonly nodeTimeoutMs: number;
  /** Ask the library for a fencing token with each lock. */
  readonly fencing: boolean;
  /** Replicas of each node that must confirm a grant (syncReplicas); undefined: none. */
  readonly syncReplicas?: number | undefined;
  /** How long a call waits for a node's first connection (and an acquire keeps trying); the library's default when absent. */
  readonly acquireTimeoutMs?: number;
}

/** RedisLock for one node, Redlock for several: the CLI adds no lock logic of its own. */
export function createLocker(clients: readonly Redis[], choice: LockerChoice): RedisLock | Redlock {
  const options = {
    nodeTimeoutMs: choice.nodeTimeoutMs,
    fencing: choice.fencing,
    ...(choice.syncReplicas === undefined ? {} : { syncReplicas: { replicas: choice.syncReplicas } }),
    ...(choice.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: choice.acquireTimeoutMs }),
  };
  const [only] = clients;
  return clients.length === 1 && only ? new RedisLock(only, options) : new Redlock(clients, options);
}
