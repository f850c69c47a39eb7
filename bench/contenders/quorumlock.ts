/** quorumlock at its defaults: RedisLock on one node, Redlock on more. */
import type { Library } from '../library.js';
import type { BenchLocker, Contender } from './types.js';

/**
 * `lib`: the build of this checkout, or with `candidate` a build of another
 * checkout measured side by side (`--candidate DIR`).
 */
export function quorumlockContender(lib: Library, candidate?: string): Contender {
  return {
    library: candidate === undefined ? 'quorumlock' : 'quorumlock-candidate',
    variant: 'defaults',
    role: candidate === undefined ? 'ours' : 'candidate',
    settings: `${candidate === undefined ? '' : `built from ${candidate}; `}defaults: acquireTimeoutMs 10000, retry full jitter 25..400 ms, nodeTimeoutMs 50`,
    className: (nodeCount) => (nodeCount === 1 ? 'RedisLock' : 'Redlock'),
    create(clients): BenchLocker {
      const [only] = clients;
      const locker = clients.length === 1 && only !== undefined ? new lib.RedisLock(only) : new lib.Redlock(clients);
      const { ErrorCode, isQuorumLockError } = lib;
      return {
        async acquire(key, ttlMs, signal) {
          try {
            return await locker.acquire(key, ttlMs, { signal });
          } catch (error) {
            // Still held when acquireTimeoutMs ran out, or the round was over.
            if (isQuorumLockError(error) && (error.code === ErrorCode.LOCK_HELD || error.code === ErrorCode.ABORTED)) {
              return null;
            }
            throw error;
          }
        },
      };
    },
  };
}
