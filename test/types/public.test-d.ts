import type { Redis } from 'ioredis';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type AcquireEvent,
  type Lock,
  type Locker,
  type LockerOptions,
  type QuorumLockError,
  type ReleaseResult,
  RedisLock,
  Redlock,
  ErrorCode,
} from '../../src/index.js';

declare const redis: Redis;

describe('public types', () => {
  it('RedisLock and Redlock are Lockers', () => {
    expectTypeOf(new RedisLock(redis)).toMatchTypeOf<Locker>();
    expectTypeOf(new Redlock([redis, redis, redis])).toMatchTypeOf<Locker>();
  });

  it('acquire resolves to a Lock, tryAcquire to a Lock or null', () => {
    const locker = new Redlock([redis]);
    expectTypeOf(locker.acquire('a', 1000)).resolves.toEqualTypeOf<Lock>();
    expectTypeOf(locker.tryAcquire(['a', 'b'], 1000)).resolves.toEqualTypeOf<Lock | null>();
    // @ts-expect-error a TTL is a number of milliseconds
    void locker.acquire('a', '10s');
  });

  it('using() passes the signal and the lock, and resolves to the routine’s result', () => {
    const result = new RedisLock(redis).using('a', 1000, async (signal, lock) => {
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(lock).toEqualTypeOf<Lock>();
      return 42 as const;
    });
    expectTypeOf(result).resolves.toEqualTypeOf<42>();
  });

  it('the Lock handle', () => {
    const lock = {} as Lock;
    expectTypeOf(lock.value).toEqualTypeOf<string>();
    expectTypeOf(lock.resources).toEqualTypeOf<readonly string[]>();
    expectTypeOf(lock.validUntil).toEqualTypeOf<number>();
    expectTypeOf(lock.fencingToken).toEqualTypeOf<bigint | undefined>();
    expectTypeOf(lock.signal).toEqualTypeOf<AbortSignal>();
    expectTypeOf(lock.release()).resolves.toEqualTypeOf<ReleaseResult>();
    expectTypeOf(lock.extend(1000)).resolves.toEqualTypeOf<Lock>();
  });

  it('errors carry a code from ErrorCode', () => {
    expectTypeOf<QuorumLockError['code']>().toEqualTypeOf<(typeof ErrorCode)[keyof typeof ErrorCode]>();
  });

  it('options are checked', () => {
    expectTypeOf<{ driftFactor: number; fencing: boolean }>().toMatchTypeOf<LockerOptions>();
    // @ts-expect-error node-redlock's option names are not ours
    const bad: LockerOptions = { retryCount: 3 };
    void bad;
    expectTypeOf<AcquireEvent['nodes'][number]['status']>().toEqualTypeOf<'ok' | 'held' | 'error' | 'timeout'>();
  });
});
