import { LimitMismatchError } from '../shared/errors.js';
import type { NodeOutcome } from '../shared/outcome.js';
import type { NodeRequest } from '../node/LockNode.js';
import type { NodeBackend } from '../node/NodeBackend.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import {
  readSemaphoreAcquire,
  readSemaphoreExtend,
  type SemaphoreAcquireReply,
  semaphoreAcquireScript,
  semaphoreExtendScript,
} from '../scripts/semaphore.js';
import type { LuaScript } from '../scripts/LuaScript.js';
import { resourceOf } from './permitKeys.js';

function run<T>(backend: NodeBackend, script: LuaScript, keys: readonly string[], args: (string | number)[], read: (reply: unknown) => T): Promise<T> {
  if (!backend.runScript) return Promise.reject(new Error(`${backend.name} cannot run a semaphore's scripts`));
  return backend.runScript(script, keys, args, read);
}

function plainOutcome(node: string, status: NodeOutcome['status'], ms: number, error: Error | undefined): NodeOutcome {
  return error ? { node, status, ms, error } : { node, status, ms };
}

/**
 * The semaphore's node requests for the quorum engine. Keys: the limit
 * record, then the permit slots (permitKeys.ts). A node that records another
 * limit answers with an error outcome whose error is LimitMismatchError.
 */
export function semaphoreRequests(limit: number): PrimitiveRequests {
  return {
    acquire: (keys, value, ttlMs): NodeRequest<SemaphoreAcquireReply, NodeOutcome> => ({
      awaitsConnection: true,
      send: (backend) => run(backend, semaphoreAcquireScript, keys, [value, ttlMs, limit], readSemaphoreAcquire),
      interpret: (reply) => (reply.taken ? 'ok' : reply.recordedLimit === undefined ? 'held' : 'error'),
      describe: (node, status, ms, reply, error) =>
        reply?.recordedLimit === undefined
          ? plainOutcome(node, status, ms, error)
          : plainOutcome(node, status, ms, new LimitMismatchError(resourceOf(keys[0] ?? ''), limit, reply.recordedLimit, node)),
    }),
    extend: (keys, value, ttlMs): NodeRequest<boolean, NodeOutcome> => ({
      send: (backend) => run(backend, semaphoreExtendScript, keys, [value, ttlMs, limit], readSemaphoreExtend),
      interpret: (extended) => (extended ? 'ok' : 'held'),
      describe: (node, status, ms, _reply, error) => plainOutcome(node, status, ms, error),
    }),
  };
}
