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
const TAGGED_CHARS = TAG_PREFIX.length + VALUE_CHARS;

/**
 * The process tag, a dot, then 128 random bits in hex: the value that tells
 * our keys from anyone else's. Drawn from a pool refilled 4 KiB at a time
 * and turned into hex once per refill: one small call into the CSPRNG per
 * lock, and then one hex encoding per lock, were each a visible share of an
 * uncontended acquire. Tag and hex are joined once per refill, into one
 * string that values are slices of, so a lock's value costs no
 * concatenation of its own.
 */
export function randomValue(): string {
  if (next === POOL_VALUES) {
    randomFillSync(pool);
    const hex = pool.toString('hex');
    const values: string[] = [];
    for (let i = 0; i < POOL_VALUES; i++) values.push(hex.slice(i * VALUE_CHARS, (i + 1) * VALUE_CHARS));
    poolHex = TAG_PREFIX + values.join(TAG_PREFIX);
    next = 0;
  }
  const start = next++ * TAGGED_CHARS;
  return poolHex.slice(start, start + TAGGED_CHARS);
}
