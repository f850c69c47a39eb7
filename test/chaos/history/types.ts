/**
 * The records of a chaos history. Everything is plain JSON (a child worker
 * sends its records over IPC), times are on the shared time base
 * (timeBase.ts), fencing tokens are decimal strings (bigint is not JSON).
 */
import type { NodeStatus } from '../../../src/index.js';

/** One quorum round the locker ran: an acquire attempt, an extend, or a release. */
export type OpKind = 'acquire' | 'extend' | 'release';

/**
 * How the round ended. `ok` for a release means it ran (it never fails);
 * the others name the typed error the round rejected with.
 */
export type OpResult = 'ok' | 'held' | 'unreachable' | 'exhausted' | 'lost' | 'aborted' | 'error';

export interface NodeOutcomeRecord {
  /** Node label (n0..n4) when the scenario named its nodes, else host:port. */
  readonly node: string;
  readonly status: NodeStatus;
  readonly ms: number;
  readonly error?: string;
}

export interface OpRecord {
  /** Unique in the history: `<client>#<seq>`. */
  readonly id: string;
  /** Which locker ran it, e.g. `c2` or `w1.c0` (worker 1, client 0). */
  readonly client: string;
  readonly kind: OpKind;
  readonly resources: readonly string[];
  /** The lock value: ties an acquire to its extends and its release. */
  readonly value: string;
  readonly ttlMs?: number;
  /** Quorum of the locker (floor(N/2)+1). */
  readonly quorum: number;
  readonly invokedAt: number;
  readonly completedAt: number;
  readonly result: OpResult;
  /** The error's `code` when the round rejected. */
  readonly errorCode?: string;
  /**
   * Node outcomes known when the round was decided (what the library saw;
   * nodes that had not answered yet are absent).
   */
  readonly nodes: readonly NodeOutcomeRecord[];
  /** For a granted acquire or extend: the validity end, converted to the shared time base. */
  readonly validUntil?: number;
  /** Release only: nodes on which our keys were deleted. */
  readonly released?: number;
  /** Fencing tokens of a granted acquire (one per resource, decimal), when the locker has `fencing: true`. */
  readonly fencingTokens?: readonly string[];
  /**
   * An acquire: the lock was a handoff a quorum of nodes announced, taken as
   * the grant (no request of its own; `nodes` are the nodes that handed it
   * over). An extend: that lock's claim of its full TTL.
   */
  readonly handedOff?: true;
}

/** The lock reached the caller (acquire/tryAcquire resolved, or the using() routine started). */
export interface HandoverRecord {
  readonly client: string;
  readonly value: string;
  readonly at: number;
  /** `lock.fencingTokens` (one per resource, decimal) when present. */
  readonly fencingTokens?: readonly string[];
}

/** A release round going out (streamed before it is decided: see HistorySink.releasing). */
export interface ReleaseIntent {
  readonly client: string;
  readonly value: string;
  readonly resources: readonly string[];
  readonly at: number;
}

/** A fault, active from `from` to `to` (equal for an instant, such as a clock jump). */
export interface FaultRecord {
  readonly id: number;
  /** e.g. 'kill -9', 'SIGSTOP', 'restart-empty', 'proxy:dropReplies', 'skew x3', 'jump'. */
  readonly kind: string;
  /** e.g. 'n2', 'w1' (a worker process), 'all'. */
  readonly target: string;
  readonly detail?: string;
  readonly from: number;
  readonly to: number;
}

export interface History {
  readonly ops: readonly OpRecord[];
  readonly handovers: readonly HandoverRecord[];
  readonly faults: readonly FaultRecord[];
  /** Scenarios that measure liveness: every acquire() call's wish for the lock. */
  readonly wants?: readonly WantRecord[];
  /** Wait-line scenarios: what the nodes had, when it changed. */
  readonly snapshots?: readonly NodeSnapshot[];
  /** Holds re-entered on a held lock (check/holders.ts counts each as part of its outer hold). */
  readonly reentries?: readonly ReentryRecord[];
  /** Wait-line scenarios: each caller's hold, as the caller saw it. */
  readonly holds?: readonly HoldRecord[];
  /** Wait-line scenarios: when a worker's event loop did not run (a busy machine). */
  readonly stalls?: readonly StallRecord[];
}

/** A process that could not run from `from` to `to`, though nobody stopped it. */
export interface StallRecord {
  readonly process: string;
  readonly from: number;
  readonly to: number;
}

/** How a want ended: the caller got the lock, acquire() rejected, or its process was killed. */
export type WantEnd = 'acquired' | 'gave-up' | 'killed';

/**
 * One acquire() call's wish for the lock, from the call until it resolved,
 * rejected or its process died: the liveness figure (check/liveness.ts)
 * needs to know who wanted the resource when. Whether the waiter could act
 * at a time (its process not SIGSTOPped) comes from the fault records, whose
 * target is the process.
 */
export interface WantRecord {
  /** Unique in the history: `<client>~<seq>`. */
  readonly id: string;
  readonly client: string;
  /** The process the waiter ran in (fault records name it), e.g. `w3`. */
  readonly process: string;
  readonly resources: readonly string[];
  readonly from: number;
  readonly to: number;
  readonly end: WantEnd;
}

/**
 * What one node had for a resource at one moment (wait-line scenarios sample
 * every node, atomically per node, and keep a snapshot when it changed): the
 * key, and its wait line with each place's ticket and lease. For reading a
 * finding, never for judging one.
 */
export interface NodeSnapshot {
  readonly node: string;
  /** When the reply arrived, on the shared time base. */
  readonly at: number;
  /** The key's value (a trailing '!' marks it), or null when free. */
  readonly value: string | null;
  /** The key's remaining TTL in ms (PTTL). */
  readonly pttlMs: number;
  /** The line, head first: value and ticket. */
  readonly line: readonly (readonly [string, string])[];
  /** Each place's lease, as ms left on the node's clock (negative: passed, not yet dropped). */
  readonly leaseLeftMs: readonly (readonly [string, number])[];
}

/**
 * One caller's hold of a lock as the caller saw it: from the lock in hand to
 * its release() call, or to the lock's validUntil (or its process's death)
 * if it never called it. Holders in the OpRecords are told apart by value;
 * callers of one process handed a lock without Redis (in-process handoff)
 * share a value, and only these records tell them apart.
 */
export interface HoldRecord {
  /** The want (acquire() call) that got the lock. */
  readonly id: string;
  readonly client: string;
  readonly process: string;
  readonly value: string;
  readonly resources: readonly string[];
  readonly from: number;
  /** The end of the caller's belief: release() called, validity over, or process killed, whichever came first. */
  readonly to: number;
  readonly end: 'released' | 'expired' | 'killed';
}

/**
 * A hold re-entered on a lock someone holds: nested in the holding routine
 * (a using() or acquire() inside its scope), or by the lock's value from
 * another locker, as a second process would (`reenter()`). It makes no
 * acquire round: its value is the outer hold's.
 */
export interface ReentryRecord {
  readonly client: string;
  readonly value: string;
  readonly resources: readonly string[];
  /** Re-entered by value from another locker, not nested in the holder's routine. */
  readonly byValue: boolean;
  /** From the handle in the caller's hand to its release() call, or the end of its validity if earlier. */
  readonly from: number;
  readonly to: number;
}
