import { randomFillSync } from 'node:crypto';

const VALUE_BYTES = 16;
const VALUE_CHARS = VALUE_BYTES * 2;
const POOL_VALUES = 256;
const pool = Buffer.alloc(VALUE_BYTES * POOL_VALUES);
let poolHex = '';
let next = POOL_VALUES;

/**
 * 128 random bits, hex: the value that tells our keys from anyone else's.
 * Drawn from a pool refilled 4 KiB at a time and turned into hex once per
 * refill: one small call into the CSPRNG per lock, and then one hex encoding
 * per lock, were each a visible share of an uncontended acquire. A value is
 * a slice of the pool's hex string (V8 shares the characters), so a held
 * lock keeps at most that 8 KiB string alive.
 */
export function randomValue(): string {
  if (next === POOL_VALUES) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    next = 0;
  }
  const start = next++ * VALUE_CHARS;
  return poolHex.slice(start, start + VALUE_CHARS);
}
