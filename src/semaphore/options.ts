import { InvalidArgumentError } from '../shared/errors.js';
import { type AcquireOptions, type LockerOptions, type ResolvedOptions, resolveLockerOptions, type TryAcquireOptions } from '../lock/options.js';
import { assertInteger } from '../lock/validate.js';
import { describe } from '../shared/describe.js';

/** The largest limit: an acquire may try every slot, each a vote. */
export const MAX_LIMIT = 1024;

/**
 * Options of RedisSemaphore and RedlockSemaphore: a locker's options with the
 * `limit`; `fencing` and `reentrant` are not offered (true is refused).
 */
export interface SemaphoreOptions extends LockerOptions {
  /**
   * How many permits of a resource may be held at once, from 1 to 1024.
   * Required; every process must state the same limit for a resource
   * (another one is refused with {@link LimitMismatchError}).
   */
  readonly limit: number;
  /** Not offered: a fencing token belongs to one holder of one resource. */
  readonly fencing?: false;
  /** Not offered: re-entering a permit has no clear meaning. */
  readonly reentrant?: false;
}

/** One holder's share of the limit. */
export interface PermitOptions {
  /** Permits taken together, all or none, from 1 to the limit. @default 1 */
  readonly permits?: number;
}

/** Options of a semaphore's acquire() and using(): those of the mutex, and `permits`. */
export type SemaphoreAcquireOptions = AcquireOptions & PermitOptions;
/** Options of a semaphore's tryAcquire(): `signal`, and `permits`. */
export type SemaphoreTryAcquireOptions = TryAcquireOptions & PermitOptions;

export interface ResolvedSemaphoreOptions {
  readonly limit: number;
  readonly settings: ResolvedOptions;
}

const UNOFFERED = ['fencing', 'reentrant'] as const;

export function resolveSemaphoreOptions(options: unknown): ResolvedSemaphoreOptions {
  if (options === undefined) throw new InvalidArgumentError('options.limit', 'a semaphore needs a limit ({ limit: K })');
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError('options', `expected an object with a limit, got ${describe(options)}`);
  }
  const { limit, ...locker } = options as unknown as SemaphoreOptions;
  assertInteger(limit, 'options.limit', 1, MAX_LIMIT);
  for (const flag of UNOFFERED) {
    if ((locker as LockerOptions)[flag] === true) throw new InvalidArgumentError(`options.${flag}`, 'a semaphore does not offer it');
  }
  const settings = resolveLockerOptions(locker);
  return { limit, settings: { ...settings, fencing: false, reentrant: false } };
}

/** Splits a call's `permits` from the locker's own acquire options. */
export function takePermits<O extends object>(options: (O & PermitOptions) | undefined, limit: number): { permits: number; rest: O | undefined } {
  if (options === undefined || options === null || typeof options !== 'object' || !('permits' in options)) {
    return { permits: 1, rest: options as O | undefined };
  }
  const { permits, ...rest } = options;
  assertInteger(permits, 'options.permits', 1, limit);
  return { permits, rest: rest as O };
}
