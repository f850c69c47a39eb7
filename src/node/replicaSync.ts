import { ReplicaSyncError } from '../shared/errors.js';
import type { NodeRequest } from './LockNode.js';
import type { SyncedReply } from './NodeBackend.js';
import type { NodeOutcome } from '../shared/outcome.js';

/** How many replicas must confirm a grant, and how long WAIT may wait for them. */
export interface ReplicaSync {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * `request`, with the node's grant counted only once `sync.replicas` of its
 * replicas have the write: a grant that WAIT could not confirm in time is
 * that node's error (ReplicaSyncError), and like any error it is undone
 * with the rest of a failed attempt. A refusal needs no confirmation: it
 * wrote nothing that a failover could lose.
 */
export function syncedRequest<T, O extends NodeOutcome>(request: NodeRequest<T, O>, sync: ReplicaSync): NodeRequest<SyncedReply<T>, O> {
  const { replicas, timeoutMs } = sync;
  return {
    awaitsConnection: request.awaitsConnection,
    send: (backend) => {
      if (!backend.synced) return Promise.reject(new Error(`${backend.name} cannot wait for replicas`));
      return backend.synced(() => request.send(backend), replicas, timeoutMs);
    },
    interpret: (synced) => {
      const status = request.interpret(synced.reply);
      return status === 'ok' && (synced.acknowledged < replicas || synced.connectionChanged) ? 'error' : status;
    },
    describe: (node, status, ms, synced, error) => {
      if (status === 'error' && error === undefined && synced !== undefined) {
        const cause = new ReplicaSyncError(node, synced.acknowledged, replicas, timeoutMs, synced.connectionChanged === true);
        return request.describe(node, status, ms, undefined, cause);
      }
      return request.describe(node, status, ms, synced?.reply, error);
    },
  };
}
