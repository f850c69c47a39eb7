import type { Redis } from 'ioredis';
import { InvalidArgumentError } from '../lock/errors.js';
import type { Lock } from '../lock/Lock.js';
import type { LockerOptions } from '../lock/options.js';
import { Redlock } from '../redlock/Redlock.js';
import { RedisLock } from '../single/RedisLock.js';
import { usageFailure } from './failure.js';

export interface LockerChoice {
  readonly nodeTimeoutMs: number;
  /** Ask the library for a fencing token with each lock. */
  readonly fencing: boolean;
}

/** `fencing` is the library's option from issue 7; older builds reject it as unknown. */
type CliLockerOptions = LockerOptions & { readonly fencing?: boolean };

/** RedisLock for one node, Redlock for several: the CLI adds no lock logic of its own. */
export function createLocker(clients: readonly Redis[], choice: LockerChoice): RedisLock | Redlock {
  const options: CliLockerOptions = choice.fencing
    ? { nodeTimeoutMs: choice.nodeTimeoutMs, fencing: true }
    : { nodeTimeoutMs: choice.nodeTimeoutMs };
  try {
    const [only] = clients;
    return clients.length === 1 && only ? new RedisLock(only, options) : new Redlock(clients, options);
  } catch (error) {
    if (choice.fencing && error instanceof InvalidArgumentError && error.argument === 'options.fencing') {
      throw usageFailure('--fencing', 'fencing tokens are not supported by this build of quorumlock');
    }
    throw error;
  }
}

/** The lock's fencing token, if the library handed one out. */
export function fencingTokenOf(lock: Lock): bigint | undefined {
  const token: unknown = Reflect.get(lock, 'fencingToken');
  return typeof token === 'bigint' ? token : undefined;
}
