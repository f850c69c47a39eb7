/**
 * Messages between the chaos test (parent) and a worker process, over the
 * child's IPC channel. Records are plain JSON (history/types.ts).
 */
import type { FaultRecord, HandoverRecord, OpRecord, ReleaseIntent, WantEnd } from '../history/types.js';
import type { LockerSettings } from '../run/scenario.js';
import type { ClientStats, WorkloadConfig } from '../run/workload.js';

export interface WorkerConfig {
  /** Worker label, prefix of its lockers' labels (`w1` → `w1.c0`). */
  readonly name: string;
  readonly seed: number;
  /** One list of node endpoints per locker (its own proxies), in node order. */
  readonly lockers: readonly (readonly { host: string; port: number; nodeName: string }[])[];
  readonly locker: LockerSettings;
  readonly workload: WorkloadConfig;
  /** Make Date.now() jump by up to an hour, back and forth (rule 1: the library must not care). */
  readonly wallClockJumps: boolean;
}

/**
 * A wait-line worker (worker/lineWorker.ts): its waiters call acquire() on one
 * hot resource over and over, so they spend their time in the wait lines.
 */
export interface LineWorkerConfig {
  readonly name: string;
  /** File the worker appends its records to (JSON lines), synchronously: what a kill -9 cannot lose. */
  readonly journal: string;
  readonly seed: number;
  /** One list of node endpoints per locker; each locker runs `waitersPerLocker` waiters. */
  readonly lockers: readonly (readonly { host: string; port: number; nodeName: string }[])[];
  readonly waitersPerLocker: number;
  readonly resource: string;
  readonly ttlMs: number;
  readonly nodeTimeoutMs: number;
  readonly fencing: boolean;
  readonly retry: { readonly baseDelayMs: number; readonly maxDelayMs: number };
  /** Most acquire() calls wait this long; `impatientChance` of them give up after `impatientTimeoutMs`. */
  readonly acquireTimeoutMs: number;
  readonly impatientChance: number;
  readonly impatientTimeoutMs: number;
  /** Holds last 0..shortHoldMs, or with `longHoldChance` longHoldMs[0]..[1] (shorter than the validity). */
  readonly shortHoldMs: number;
  readonly longHoldChance: number;
  readonly longHoldMs: readonly [number, number];
}

/** A wait-line worker's counts, sent when it stops (a killed worker sends none). */
export interface LineWorkerStats {
  readonly acquired: number;
  readonly gaveUp: Readonly<Record<string, number>>;
  readonly unexpected: readonly string[];
}

export type ToWorker =
  | { readonly type: 'start'; readonly config: WorkerConfig }
  | { readonly type: 'prepare'; readonly config: LineWorkerConfig }
  | { readonly type: 'go' }
  | { readonly type: 'ping'; readonly sentAt: number }
  | { readonly type: 'stop' };

export type FromWorker =
  | { readonly type: 'ready' }
  // A wait-line worker's records, as they happen (its journal has the same): a worker killed with -9 sends no history at the end.
  | { readonly type: 'op'; readonly record: OpRecord }
  | { readonly type: 'handover'; readonly record: HandoverRecord }
  | { readonly type: 'releasing'; readonly record: ReleaseIntent }
  | { readonly type: 'want'; readonly id: string; readonly client: string; readonly resources: readonly string[]; readonly at: number }
  | { readonly type: 'wanted'; readonly id: string; readonly at: number; readonly end: WantEnd }
  | {
      readonly type: 'hold';
      readonly id: string;
      readonly client: string;
      readonly value: string;
      readonly resources: readonly string[];
      readonly at: number;
      /** lock.validUntil on the shared time base. */
      readonly validUntil: number;
    }
  | { readonly type: 'unhold'; readonly id: string; readonly at: number; readonly validUntil: number }
  /** The worker's event loop did not run from `from` to `to` (a busy machine): its waiters could not act. */
  | { readonly type: 'stall'; readonly from: number; readonly to: number }
  | { readonly type: 'line-done'; readonly stats: LineWorkerStats; readonly unhandled: readonly string[] }
  | { readonly type: 'pong'; readonly sentAt: number; readonly workerNow: number }
  | { readonly type: 'progress'; readonly acquisitions: number }
  | {
      readonly type: 'history';
      readonly ops: readonly OpRecord[];
      readonly handovers: readonly HandoverRecord[];
      /** Faults the worker injected into itself (wall-clock jumps). */
      readonly faults: readonly FaultRecord[];
      readonly stats: ClientStats;
      readonly unhandled: readonly string[];
    };
