/**
 * What one node answered to one request, as the coordinator saw it.
 * `held`: the key holds another value (acquire), or no longer holds ours
 * (extend, release). `timeout`: no reply within the node timeout; the request
 * may still have been applied.
 */
export type NodeStatus = 'ok' | 'held' | 'error' | 'timeout';

export interface NodeOutcome {
  /** The node's label: `host:port`, or the `name` given for it. */
  readonly node: string;
  readonly status: NodeStatus;
  /** Milliseconds from sending the request to its outcome, on the library's clock. */
  readonly ms: number;
  /** Present for `error` and `timeout`. */
  readonly error?: Error;
}

export function countStatus(outcomes: readonly NodeOutcome[], status: NodeStatus): number {
  let count = 0;
  for (const outcome of outcomes) if (outcome.status === status) count++;
  return count;
}
