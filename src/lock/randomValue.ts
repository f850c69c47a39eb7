import { randomFillSync } from 'node:crypto';

const VALUE_BYTES = 16;
const POOL_VALUES = 256;
const pool = Buffer.alloc(VALUE_BYTES * POOL_VALUES);
let next = POOL_VALUES;

/**
 * 128 random bits, hex: the value that tells our keys from anyone else's.
 * Drawn from a pool refilled 4 KiB at a time, since one small call into the
 * CSPRNG per lock was a visible share of an uncontended acquire.
 */
export function randomValue(): string {
  if (next === POOL_VALUES) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next++ * VALUE_BYTES;
  return pool.toString('hex', start, start + VALUE_BYTES);
}
