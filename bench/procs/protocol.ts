/**
 * Messages between the bench (parent) and a procs worker (child) over the
 * child's IPC channel, as plain JSON. Times are on the shared time base
 * (scenarios/clock.ts sharedNow), so records of different processes compare.
 */

export const PROGRESS_MS = 250;

export interface WorkerConfig {
  /** Index of this process among the measurement's processes. */
  readonly proc: number;
  /** `library:variant` of the contender to run. */
  readonly contender: string;
  /** file: URL of quorumlock's bundle (bench/library.ts), and of a candidate build if any. */
  readonly libraryUrl: string;
  readonly candidate: { readonly url: string; readonly from: string } | undefined;
  readonly urls: readonly string[];
  readonly key: string;
  /** Where the warm-up cycles go: a key of this process alone. */
  readonly warmupKey: string;
  /** Where the shared warm-up goes (see 'warm'): one key for all the measurement's processes, not the measured key. */
  readonly sharedWarmupKey: string;
  readonly ttlMs: number;
  readonly waiters: number;
  readonly sections: number;
  readonly holdMs: number;
}

/** One critical section of one waiter. */
export interface SectionRecord {
  readonly waiter: number;
  /** When the waiter started wanting the lock. */
  readonly wantAt: number;
  /** When acquire returned the lock. */
  readonly start: number;
  /** When the hold ended and release was called: the lock may be taken by another from here on. */
  readonly end: number;
}

export interface WorkerReport {
  readonly proc: number;
  /** False when the parent stopped it before every waiter had all of its sections. */
  readonly finished: boolean;
  readonly goAt: number;
  /** When the last waiter's last release returned (finished), or when it was stopped. */
  readonly endAt: number;
  readonly sections: readonly SectionRecord[];
  /** Since when each waiter still waiting at endAt had been waiting. */
  readonly waitingSince: readonly number[];
  /** Requests sent through this process's clients between go and endAt. */
  readonly requests: number;
  readonly giveUps: number;
  readonly errors: number;
}

export type ToWorker =
  | { readonly type: 'start'; readonly config: WorkerConfig }
  /**
   * Once every process is ready: all of them contend for sharedWarmupKey
   * together for one unmeasured round of the measured shape, so the
   * contended paths (wait lines, handoffs between processes, their
   * connections) are warm at go too.
   */
  | { readonly type: 'warm' }
  | { readonly type: 'ping'; readonly sentAt: number }
  | { readonly type: 'go' }
  | { readonly type: 'stop' };

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'warmed' }
  /** Sections done so far, every PROGRESS_MS after go: the parent judges the pace by it. */
  | { readonly type: 'progress'; readonly sections: number }
  | { readonly type: 'pong'; readonly sentAt: number; readonly workerNow: number }
  | { readonly type: 'report'; readonly report: WorkerReport };
