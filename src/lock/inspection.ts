import type { InspectOutcome } from '../node/LockNode.js';
import type { KeyState } from '../scripts/inspect.js';

/**
 * What a quorum of nodes says of one resource:
 * - `held`: one value on at least a quorum of the nodes;
 * - `free`: the key absent on at least a quorum: a lock could be taken now;
 * - `contested`: a quorum answered, but neither (values split between holders
 *   and free nodes, as after a failed acquire or while a lock expires);
 * - `unknown`: too few nodes answered to tell.
 */
export type ResourceState = 'held' | 'free' | 'contested' | 'unknown';

/** What a quorum of nodes says of one resource, in {@link Inspection.resources}. */
export interface ResourceInspection {
  /** The resource, as inspect() was asked. */
  readonly resource: string;
  /** Held, free, contested or unknown: see {@link ResourceState}. */
  readonly state: ResourceState;
  /** The lock value on a quorum of nodes (a quorum agrees on one holder), else null. */
  readonly holder: string | null;
  /** Nodes that answered with `holder`'s value (0 without a holder). */
  readonly heldOn: number;
  /**
   * With a holder: the quorum-th longest PTTL among the nodes holding it,
   * the time until fewer than a quorum hold it, as the nodes counted it when
   * they answered (no drift taken off). 0 without a holder; -1 when a
   * quorum of its keys has no expiry (not set by quorumlock).
   */
  readonly remainingMs: number;
  /** Waiters in the resource's wait line whose lease has not passed: the most any answering node counts. */
  readonly waiters: number;
}

/** What locker.inspect() answers: per resource a summary, per node its outcome and readings. */
export interface Inspection {
  /** Votes a lock needs: floor(N / 2) + 1 of the locker's N nodes. */
  readonly quorum: number;
  /** Nodes that answered (status `ok`). */
  readonly answered: number;
  /** One summary per resource, in the order asked. */
  readonly resources: readonly ResourceInspection[];
  /** One per node, in the order of the locker's nodes; `keys` in the order of `resources`. */
  readonly nodes: readonly InspectOutcome[];
}

/** The summary of what each node read (pure: the node requests are the caller's). */
export function summarizeInspection(resources: readonly string[], nodes: readonly InspectOutcome[], quorum: number): Inspection {
  const answered = nodes.filter((node) => node.status === 'ok' && node.keys !== undefined);
  const summaries = resources.map((resource, index) => {
    const states = answered.map((node) => node.keys?.[index]).filter((state): state is KeyState => state !== undefined);
    return summarizeResource(resource, states, quorum);
  });
  return { quorum, answered: answered.length, resources: summaries, nodes };
}

function summarizeResource(resource: string, states: readonly KeyState[], quorum: number): ResourceInspection {
  const waiters = states.reduce((most, state) => Math.max(most, state.waiters), 0);
  const counts = new Map<string, number>();
  let free = 0;
  for (const { value } of states) {
    if (value === null) free++;
    else counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  for (const [holder, heldOn] of counts) {
    if (heldOn < quorum) continue;
    const pttls = states.filter((state) => state.value === holder).map((state) => state.pttlMs);
    pttls.sort((a, b) => b - a);
    return { resource, state: 'held', holder, heldOn, remainingMs: pttls[quorum - 1] ?? 0, waiters };
  }
  const state: ResourceState = free >= quorum ? 'free' : states.length >= quorum ? 'contested' : 'unknown';
  return { resource, state, holder: null, heldOn: 0, remainingMs: 0, waiters };
}
