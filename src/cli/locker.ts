import type { Redis } from 'ioredis';
import type { Locker } from '../lock/Locker.js';
import { Redlock } from '../redlock/Redlock.js';
import { RedisReadWriteLock } from '../rwlock/RedisReadWriteLock.js';
import { RedlockReadWriteLock } from '../rwlock/RedlockReadWriteLock.js';
import { RedisSemaphore } from '../semaphore/RedisSemaphore.js';
import { RedlockSemaphore } from '../semaphore/RedlockSemaphore.js';
import { RedisLock } from '../single/RedisLock.js';

/** Which primitive an exec holds: the mutex, a permit of a semaphore (--limit), or a read or write lock (--shared, --exclusive). */
export type LockMode = { readonly kind: 'mutex' } | { readonly kind: 'semaphore'; readonly limit: number } | { readonly kind: 'shared' | 'exclusive' };

export interface LockerChoice {
  readonly nodeTimeoutMs: number;
  /** Ask the library for a fencing token with each lock. */
  readonly fencing: boolean;
  /** Replicas of each node that must confirm a grant (syncReplicas); undefined: none. */
  readonly syncReplicas?: number | undefined;
  /** How long a call waits for a node's first connection (and an acquire keeps trying); the library's default when absent. */
  readonly acquireTimeoutMs?: number;
  /** Default: the mutex. */
  readonly mode?: LockMode;
}

/** One node or a quorum of several, per the chosen primitive: the CLI adds no lock logic of its own. */
export function createLocker(clients: readonly Redis[], choice: LockerChoice): Locker {
  const options = {
    nodeTimeoutMs: choice.nodeTimeoutMs,
    ...(choice.syncReplicas === undefined ? {} : { syncReplicas: { replicas: choice.syncReplicas } }),
    ...(choice.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: choice.acquireTimeoutMs }),
  };
  const [only] = clients;
  const single = clients.length === 1 && only !== undefined;
  const mode = choice.mode ?? { kind: 'mutex' };
  switch (mode.kind) {
    case 'mutex': {
      const mutexOptions = { ...options, fencing: choice.fencing };
      return single ? new RedisLock(only, mutexOptions) : new Redlock(clients, mutexOptions);
    }
    case 'semaphore': {
      const semaphoreOptions = { ...options, limit: mode.limit };
      return single ? new RedisSemaphore(only, semaphoreOptions) : new RedlockSemaphore(clients, semaphoreOptions);
    }
    case 'shared':
    case 'exclusive': {
      const readWrite = single ? new RedisReadWriteLock(only, options) : new RedlockReadWriteLock(clients, options);
      return mode.kind === 'shared' ? readWrite.read : readWrite.write;
    }
  }
}
