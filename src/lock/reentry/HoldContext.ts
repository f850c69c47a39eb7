import { AsyncLocalStorage } from 'node:async_hooks';
import { OverlappingHoldError } from '../../shared/errors.js';
import type { Lock } from '../Lock.js';

/**
 * A lock that a routine holds, as the routine's async context sees it:
 * using() and lock.scope() run their routine with one on top of the frames
 * their caller's context already had.
 */
interface HoldFrame {
  /** The locker that made the lock: only its own calls re-enter. */
  readonly owner: object;
  /** The lock as acquired, never a re-entry's handle: its end ends every re-entry. */
  readonly lock: Lock;
  readonly outer: HoldFrame | undefined;
}

const holdContext = new AsyncLocalStorage<HoldFrame>();

/** Calls `routine` in a context that holds `lock` as well as whatever the caller's context holds. */
export function runHolding<T>(owner: object, lock: Lock, routine: () => T): T {
  return holdContext.run({ owner, lock, outer: holdContext.getStore() }, routine);
}

/**
 * The lock of `owner` through which the caller's context holds every one of
 * `keys`, if any. A lock that ended (released, lost or expired) no longer
 * counts: the context also reaches timers and promises that a routine started
 * and left running, and these must not re-enter once its lock was released.
 * Throws OverlappingHoldError when a live held lock has some of the keys but
 * not all.
 */
export function heldLockFor(owner: object, keys: readonly string[]): Lock | undefined {
  let overlapping: Lock | undefined;
  for (let frame = holdContext.getStore(); frame !== undefined; frame = frame.outer) {
    if (frame.owner !== owner || frame.lock.ended) continue;
    const held = frame.lock.resources;
    let shared = 0;
    for (const key of keys) if (held.includes(key)) shared++;
    if (shared === keys.length) return frame.lock;
    if (shared > 0) overlapping ??= frame.lock;
  }
  if (overlapping !== undefined) throw new OverlappingHoldError(keys, overlapping.resources);
  return undefined;
}
