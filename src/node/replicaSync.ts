import { ReplicaSyncError } from '../shared/errors.js';
import type { NodeRequest } from './LockNode.js';
import type { SyncedReply } from './NodeBackend.js';
import type { NodeOutcome } from '../shared/outcome.js';

/** How many replicas must confirm a grant, and how long WAIT may wait for them. */
export interface ReplicaSync {
  readonly replicas: number;
  readonly timeoutMs: number;
  /**
   * How late the server may notice that a WAIT timed out: it checks blocked
   * clients' timeouts on its cron tick, every 1000/hz ms, when nothing else
   * wakes it. WAIT 1 5 took ~100 ms on an idle server with hz 10.
   */
  readonly serverTickMs: number;
}

/**
 * How long a synced request (the write, then its WAIT) has to answer: the
 * node timeout for the round trip, plus WAIT's own timeout, plus a server
 * tick by which the server may notice it late, plus one more tick for a
 * server whose cron runs late on a loaded host (with one tick, 1 to 2 of 50
 * attempts here ended in NODE_TIMEOUT while five test runs shared 2 cores).
 * A WAIT that answers within that is a short sync (REPLICA_SYNC), never a
 * silent node.
 */
export function syncedTimeoutMs(nodeTimeoutMs: number, sync: ReplicaSync): number {
  return nodeTimeoutMs + sync.timeoutMs + 2 * sync.serverTickMs;
}

/**
 * WAIT's timeout for a synced request that has `requestTimeoutMs` (a TTL or
 * the validity left may cut it short of syncedTimeoutMs): what is left of it
 * once the round trip and two server ticks are set aside. Never 0, which
 * would make WAIT block its connection for good.
 */
export function waitTimeoutMs(requestTimeoutMs: number, nodeTimeoutMs: number, sync: ReplicaSync): number {
  return Math.max(1, Math.min(sync.timeoutMs, requestTimeoutMs - nodeTimeoutMs - 2 * sync.serverTickMs));
}

/**
 * `request`, with the node's grant counted only once `sync.replicas` of its
 * replicas have the write: a grant that WAIT could not confirm in time is
 * that node's error (ReplicaSyncError), and like any error it is undone
 * with the rest of a failed attempt. A refusal needs no confirmation: it
 * wrote nothing that a failover could lose. `value` is the lock's: a
 * write given up on is followed by the lock's release (LateWrites).
 */
export function syncedRequest<T, O extends NodeOutcome>(
  request: NodeRequest<T, O>,
  replicas: number,
  timeoutMs: number,
  value: string | readonly string[],
): NodeRequest<SyncedReply<T>, O> {
  return {
    awaitsConnection: request.awaitsConnection,
    writes: value,
    send: (backend) => {
      if (!backend.synced) return Promise.reject(new Error(`${backend.name} cannot wait for replicas`));
      return backend.synced((on) => request.send(on), replicas, timeoutMs);
    },
    interpret: (synced) => {
      const status = request.interpret(synced.reply);
      // A reply from a replaced connection proves nothing, a refusal included: the write may have
      // been sent again after its first run stood (SyncConnections), and an error is undone.
      if (synced.connectionChanged && status !== 'error') return 'error';
      return status === 'ok' && synced.acknowledged < replicas ? 'error' : status;
    },
    describe: (node, status, ms, synced, error) => {
      if (status === 'error' && error === undefined && synced !== undefined) {
        const cause = new ReplicaSyncError(node, synced.acknowledged, replicas, timeoutMs, synced.connectionChanged === true, Math.round(ms));
        return request.describe(node, status, ms, undefined, cause);
      }
      return request.describe(node, status, ms, synced?.reply, error);
    },
  };
}
