import { randomFillSync } from 'node:crypto';

const VALUE_BYTES = 16;
const VALUE_CHARS = VALUE_BYTES * 2;
const POOL_VALUES = 256;
const pool = Buffer.alloc(VALUE_BYTES * POOL_VALUES);
let poolHex = '';
let next = POOL_VALUES;

/**
 * This process's (or worker thread's) tag, random, in front of every value it
 * draws: a lock freed for one of its waiters is announced on this tag's
 * handoff channel (line.lua), so that one release wakes the one process whose
 * waiter it is for, not every process with a waiter for the key.
 */
export const PROCESS_TAG = randomFillSync(Buffer.alloc(4)).toString('hex');
const TAG_PREFIX = `${PROCESS_TAG}.`;

/**
 * The process tag, a dot, then 128 random bits in hex: the value that tells
 * our keys from anyone else's. Drawn from a pool refilled 4 KiB at a time
 * and turned into hex once per refill: one small call into the CSPRNG per
 * lock, and then one hex encoding per lock, were each a visible share of an
 * uncontended acquire.
 */
export function randomValue(): string {
  if (next === POOL_VALUES) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    next = 0;
  }
  const start = next++ * VALUE_CHARS;
  return TAG_PREFIX + poolHex.slice(start, start + VALUE_CHARS);
}
