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
    expectTypeOf(lock.ttlMs).toEqualTypeOf<number>();
    expectTypeOf(lock.holds).toEqualTypeOf<number>();
    expectTypeOf(lock.scope(async (signal, same) => (signal.aborted ? same.value : 7))).resolves.toEqualTypeOf<string | 7>();
  });

  it('reenter() takes resources and a value and resolves to a Lock', () => {
    const locker: Locker = new RedisLock(redis);
    expectTypeOf(locker.reenter('a', 'f00d')).resolves.toEqualTypeOf<Lock>();
    // @ts-expect-error the value is the lock's string, not the Lock
    void locker.reenter('a', {} as Lock);
  });

  it('errors carry a code from ErrorCode', () => {
    expectTypeOf<QuorumLockError['code']>().toEqualTypeOf<(typeof ErrorCode)[keyof typeof ErrorCode]>();
  });

  it('options are checked', () => {
    expectTypeOf<{ driftFactor: number; fencing: boolean; reentrant: boolean }>().toMatchTypeOf<LockerOptions>();
    // @ts-expect-error node-redlock's option names are not ours
    const bad: LockerOptions = { retryCount: 3 };
    void bad;
    expectTypeOf<AcquireEvent['nodes'][number]['status']>().toEqualTypeOf<'ok' | 'held' | 'error' | 'timeout'>();
  });
});
