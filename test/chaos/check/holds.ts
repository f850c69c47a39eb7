/**
 * Overlaps between callers' holds (HoldRecord): what each caller believed,
 * from the lock in its hand to its release() call or the end of its validity.
 * The value-level checker (checker.ts) sees one holder per lock value; a lock
 * handed from caller to caller inside one process keeps its value, so only
 * this check can tell two of those callers holding at once.
 */
import type { HoldRecord } from '../history/types.js';
import { shortValue } from './report.js';

export interface HoldOverlap {
  readonly resource: string;
  readonly first: HoldRecord;
  readonly second: HoldRecord;
  readonly overlapMs: number;
}

export function overlappingHolds(holds: readonly HoldRecord[]): HoldOverlap[] {
  const byResource = new Map<string, HoldRecord[]>();
  for (const hold of holds) {
    if (hold.to <= hold.from) continue;
    for (const resource of hold.resources) {
      const list = byResource.get(resource);
      if (list === undefined) byResource.set(resource, [hold]);
      else list.push(hold);
    }
  }
  const overlaps: HoldOverlap[] = [];
  for (const [resource, list] of byResource) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 0; i < list.length; i++) {
      const a = list[i] as HoldRecord;
      for (let j = i + 1; j < list.length; j++) {
        const b = list[j] as HoldRecord;
        if (b.from >= a.to) break;
        overlaps.push({ resource, first: a, second: b, overlapMs: Math.min(a.to, b.to) - b.from });
      }
    }
  }
  return overlaps;
}

export function formatHoldOverlap(overlap: HoldOverlap, origin: number): string {
  const describe = (h: HoldRecord): string =>
    `${h.id} (value ${shortValue(h.value)}) held [+${(h.from - origin).toFixed(1)}, +${(h.to - origin).toFixed(1)}] (${h.end})`;
  return `CALLER OVERLAP on "${overlap.resource}" for ${overlap.overlapMs.toFixed(1)} ms: ${describe(overlap.first)} and ${describe(overlap.second)}`;
}
