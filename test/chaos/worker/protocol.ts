/**
 * Messages between the chaos test (parent) and a worker process, over the
 * child's IPC channel. Records are plain JSON (history/types.ts).
 */
import type { FaultRecord, HandoverRecord, OpRecord } from '../history/types.js';
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

export type ToWorker =
  | { readonly type: 'start'; readonly config: WorkerConfig }
  | { readonly type: 'ping'; readonly sentAt: number }
  | { readonly type: 'stop' };

export type FromWorker =
  | { readonly type: 'ready' }
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
