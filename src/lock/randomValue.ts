import { randomBytes } from 'node:crypto';

/** 128 random bits, hex: the value that tells our keys from anyone else's. */
export function randomValue(): string {
  return randomBytes(16).toString('hex');
}
