/**
 * What the holds of one round say about safety: how many held at once, and
 * how many sections began where the primitive forbids it. Pure, on holds
 * already put on one time base (semaphore/processes.ts).
 */
import type { HoldRecord } from '../semaphore/worker.js';

export interface HolderCount {
  /** The most holds seen at one moment. */
  readonly maxHolders: number;
  /**
   * Sections that began where they must not: with `limit` others held (a
   * semaphore), or, for a read-write lock, a writer beside anyone or a
   * reader beside a writer (`limit` undefined).
   */
  readonly violations: number;
  readonly meanHoldMs: number;
}

/** `limit`: a semaphore's; undefined for a read-write lock (holds carry the writer flag). */
export function countHolders(holds: readonly HoldRecord[], limit: number | undefined): HolderCount {
  // At one instant an end goes before a start: a hold handed on at the same reading is no overlap.
  const events: [at: number, change: -1 | 1, writer: 0 | 1][] = [];
  let heldMs = 0;
  for (const [start, end, writer] of holds) {
    events.push([start, 1, writer], [end, -1, writer]);
    heldMs += end - start;
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let readers = 0;
  let writers = 0;
  let maxHolders = 0;
  let violations = 0;
  for (const [, change, writer] of events) {
    if (change === 1) {
      const held = readers + writers;
      if (limit !== undefined ? held >= limit : writer === 1 ? held > 0 : writers > 0) violations++;
    }
    if (writer === 1) writers += change;
    else readers += change;
    maxHolders = Math.max(maxHolders, readers + writers);
  }
  return { maxHolders, violations, meanHoldMs: holds.length === 0 ? Number.NaN : heldMs / holds.length };
}
