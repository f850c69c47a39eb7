import { LimitMismatchError } from '../shared/errors.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import { plainOutcome, scriptRequest } from '../redlock/scriptRequest.js';
import { isOne } from '../scripts/LuaScript.js';
import { readSemaphoreAcquire, semaphoreAcquireScript, semaphoreExtendScript } from '../scripts/semaphore.js';
import { resourceOf } from './permitKeys.js';

/**
 * The semaphore's node requests for the quorum engine. Keys: the limit
 * record, then the permit slots (permitKeys.ts). A node that records another
 * limit answers with an error outcome whose error is LimitMismatchError.
 * Release is the mutex's compare-and-delete, which leaves the limit record.
 */
export function semaphoreRequests(limit: number): PrimitiveRequests {
  return {
    acquire: (keys, value, ttlMs) =>
      scriptRequest(semaphoreAcquireScript, keys, [value, ttlMs, limit], {
        awaitsConnection: true,
        read: readSemaphoreAcquire,
        interpret: (reply) => (reply.taken ? 'ok' : reply.recordedLimit === undefined ? 'held' : 'error'),
        describe: (node, status, ms, reply, error) =>
          reply?.recordedLimit === undefined
            ? plainOutcome(node, status, ms, error)
            : plainOutcome(node, status, ms, new LimitMismatchError(resourceOf(keys[0] ?? ''), limit, reply.recordedLimit, node)),
      }),
    extend: (keys, value, ttlMs) =>
      scriptRequest(semaphoreExtendScript, keys, [value, ttlMs, limit], { read: isOne, interpret: (extended) => (extended ? 'ok' : 'held') }),
  };
}
