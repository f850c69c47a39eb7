/**
 * The node-redis entrants, measured when named (--contender): quorumlock
 * given node-redis clients, and redlock-universal, the peer that exists for
 * node-redis users, through its NodeRedisAdapter at its defaults.
 */
import { createLock, createRedlock, LockAcquisitionError, NodeRedisAdapter } from 'redlock-universal';
import type { NodeRedisClient } from '../clients.js';
import type { Library } from '../library.js';
import { quorumlockContender } from './quorumlock.js';
import type { BenchLocker, Contender } from './types.js';

export function quorumlockOnNodeRedis(lib: Library): Contender {
  const onIoredis = quorumlockContender(lib);
  return { ...onIoredis, library: 'quorumlock-node-redis', client: 'node-redis', onlyWhenNamed: true, settings: `node-redis 6 clients; ${onIoredis.settings}` };
}

export const redlockUniversalOnNodeRedis: Contender = {
  library: 'redlock-universal-node-redis',
  variant: 'defaults',
  role: 'peer',
  client: 'node-redis',
  onlyWhenNamed: true,
  settings: 'node-redis 6 clients; defaults: retryAttempts 3, retryDelay 100 ms; quorum floor(N/2)+1',
  className: (nodeCount) => (nodeCount === 1 ? 'SimpleLock' : 'RedLock'),
  create(clients): BenchLocker {
    const adapters = (clients as unknown as readonly NodeRedisClient[]).map((client) => new NodeRedisAdapter(client as never));
    const [only] = adapters;
    return {
      async acquire(key, ttlMs) {
        // A lock object per key, as its README builds them.
        const lock =
          adapters.length === 1 && only !== undefined
            ? createLock({ adapter: only, key, ttl: ttlMs })
            : createRedlock({ adapters, key, ttl: ttlMs, quorum: Math.floor(adapters.length / 2) + 1 });
        try {
          const handle = await lock.acquire();
          return { release: () => lock.release(handle) };
        } catch (error) {
          // Its retries ran out while the key was held.
          if (error instanceof LockAcquisitionError) return null;
          throw error;
        }
      },
    };
  },
};
