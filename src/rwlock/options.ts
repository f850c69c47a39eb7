import { InvalidArgumentError } from '../shared/errors.js';
import { describe } from '../shared/describe.js';
import { type LockerOptions, type ResolvedOptions, resolveLockerOptions } from '../lock/options.js';
import { assertInteger, MAX_TTL_MS } from '../lock/validate.js';

/** Options of RedisReadWriteLock and RedlockReadWriteLock: a locker's options, and `writerClaimMs`. */
export interface ReadWriteLockOptions extends LockerOptions {
  /**
   * How long a waiting writer's claim holds new readers back after its last
   * attempt, in milliseconds: each attempt renews it, so a live writer keeps
   * it for as long as it waits, and a dead one blocks readers for this long
   * at most. Keep it above the retry policy's `maxDelayMs`.
   * @default 1000
   */
  readonly writerClaimMs?: number;
  /**
   * Hand each writer a fencing token (`lock.fencingToken`), strictly
   * increasing per resource across writers, as the mutex's. Readers get none.
   * @default false
   */
  readonly fencing?: boolean;
}

export const DEFAULT_WRITER_CLAIM_MS = 1000;

export interface ResolvedReadWriteOptions {
  readonly settings: ResolvedOptions;
  readonly writerClaimMs: number;
}

export function resolveReadWriteOptions(options: unknown): ResolvedReadWriteOptions {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new InvalidArgumentError('options', `expected an object, got ${describe(options)}`);
  }
  const { writerClaimMs = DEFAULT_WRITER_CLAIM_MS, ...locker } = (options ?? {}) as ReadWriteLockOptions;
  assertInteger(writerClaimMs, 'options.writerClaimMs', 1, MAX_TTL_MS);
  return { writerClaimMs, settings: resolveLockerOptions(locker) };
}
