/**
 * One key wanted by many processes: P processes × W waiters, each waiter
 * wanting it K times and holding it HOLD_MS. Every contender runs in its own
 * child processes (bench/procs/), which all start on one signal; the parent
 * puts their records on one timeline. Unlike the in-process scenarios, a
 * library cannot hand the lock around inside one process here without the
 * other processes seeing it: this is the shape of a fleet of workers sharing
 * one resource.
 */
import type { MetricId } from '../metrics.js';
import { HOLD_MS } from './contended.js';

export const PROCS_ID = 'procs';

export interface ProcsShape {
  readonly processes: number;
  /** Concurrent waiters in each process, sharing its locker and clients. */
  readonly waiters: number;
  /** Critical sections each waiter wants, one after the other. */
  readonly sections: number;
  readonly holdMs: number;
}

export const PROCS_DEFAULT_SHAPE: ProcsShape = { processes: 8, waiters: 8, sections: 8, holdMs: HOLD_MS };
export const PROCS_QUICK_SHAPE: ProcsShape = { processes: 2, waiters: 2, sections: 2, holdMs: HOLD_MS };

/**
 * A contender still busy this long after go is stopped and reported as
 * unfinished (one whose pace is hopeless is stopped sooner: procs/pace.ts).
 * With the machine loaded 5-7× over its 2 cores, quorumlock and the raw floor
 * on 5 nodes ran at 40-45 cs/s: 12-13 s for their 512 sections.
 */
export const PROCS_DEFAULT_TIMEOUT_S = 20;
export const PROCS_QUICK_TIMEOUT_S = 10;

export const PROCS_COLUMNS: readonly MetricId[] = [
  'cyclesPerSec',
  'holdCapPerSec',
  'waitP50Ms',
  'waitP99Ms',
  'fifoRatio',
  'reqsPerCycleNode',
  'cmdsPerCycleNode',
  'jainProcs',
  'jainWaiters',
  'passGapMs',
  'handoffGapMs',
  'handoffShare',
  'giveUps',
  'errors',
  'overlaps',
];

export function procsTitle(shape: ProcsShape): string {
  return `one key, ${shape.processes} processes × ${shape.waiters} waiters × ${shape.sections} sections each, ${shape.holdMs} ms hold, after an unmeasured round of the same on another key`;
}

export function totalWaiters(shape: ProcsShape): number {
  return shape.processes * shape.waiters;
}
