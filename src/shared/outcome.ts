/**
 * What one node answered to one request, as the coordinator saw it.
 * `held`: the key holds another value (acquire), or no longer holds ours
 * (extend, release). `timeout`: no reply within the node timeout; the request
 * may still have been applied.
 */
export type NodeStatus = 'ok' | 'held' | 'error' | 'timeout';

/** One node's answer to one request: in errors' `outcomes`, release results and inspections. */
export interface NodeOutcome {
  /** The node's label: `host:port`, or the `name` given for it. */
  readonly node: string;
  /** What the node answered: see {@link NodeStatus}. */
  readonly status: NodeStatus;
  /** Milliseconds from sending the request to its outcome, on the library's clock. */
  readonly ms: number;
  /**
   * Present for `error` and `timeout`: the client's error, or
   * {@link NodeTimeoutError}, {@link NodeConnectionError}, {@link ReplicaSyncError}.
   */
  readonly error?: Error;
}

export function countStatus(outcomes: readonly NodeOutcome[], status: NodeStatus): number {
  let count = 0;
  for (const outcome of outcomes) if (outcome.status === status) count++;
  return count;
}
