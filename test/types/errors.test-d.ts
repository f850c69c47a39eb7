import { describe, expectTypeOf, it } from 'vitest';
import {
  ErrorCode,
  isQuorumLockError,
  type LockHeldError,
  type LockerOptions,
  type NodeOutcome,
  type QuorumLockError,
  type QuorumLockErrorFor,
  type QuorumUnreachableError,
  type ReplicaSyncError,
  type ValidityExhaustedError,
} from '../../src/index.js';

declare const caught: unknown;

describe('isQuorumLockError narrows a caught error', () => {
  it('with one argument, to the base class, whose code is any code', () => {
    if (isQuorumLockError(caught)) {
      expectTypeOf(caught).toEqualTypeOf<QuorumLockError>();
      expectTypeOf(caught.code).toEqualTypeOf<ErrorCode>();
      // @ts-expect-error only LockHeldError and its like carry outcomes
      void caught.outcomes;
    }
  });

  it('with a code, to the class of that code', () => {
    if (isQuorumLockError(caught, ErrorCode.LOCK_HELD)) {
      expectTypeOf(caught).toEqualTypeOf<LockHeldError>();
      expectTypeOf(caught.code).toEqualTypeOf<'QUORUMLOCK_LOCK_HELD'>();
      expectTypeOf(caught.heldOnNodes).toEqualTypeOf<number>();
      expectTypeOf(caught.outcomes).toEqualTypeOf<readonly NodeOutcome[]>();
    }
  });

  it('with a union of codes, to the union of their classes', () => {
    const retried = ErrorCode.LOCK_HELD as typeof ErrorCode.LOCK_HELD | typeof ErrorCode.VALIDITY_EXHAUSTED;
    if (isQuorumLockError(caught, retried)) {
      expectTypeOf(caught).toEqualTypeOf<LockHeldError | ValidityExhaustedError>();
      expectTypeOf(caught.outcomes).toEqualTypeOf<readonly NodeOutcome[]>();
    }
  });

  it('takes only ErrorCode values', () => {
    // @ts-expect-error a key of ErrorCode is not one of its values
    isQuorumLockError(caught, 'LOCK_HELD');
    // @ts-expect-error nor is any other string
    isQuorumLockError(caught, 'held');
  });

  it('names the class of a code', () => {
    expectTypeOf<QuorumLockErrorFor<typeof ErrorCode.QUORUM_UNREACHABLE>>().toEqualTypeOf<QuorumUnreachableError>();
    expectTypeOf<QuorumLockErrorFor<typeof ErrorCode.REPLICA_SYNC>>().toEqualTypeOf<ReplicaSyncError>();
    expectTypeOf<LockHeldError['code']>().toEqualTypeOf<typeof ErrorCode.LOCK_HELD>();
  });
});

describe('the syncReplicas option', () => {
  it('takes how many replicas, and optionally how long WAIT may wait', () => {
    expectTypeOf({ syncReplicas: { replicas: 1 } }).toMatchTypeOf<LockerOptions>();
    expectTypeOf({ syncReplicas: { replicas: 2, timeoutMs: 20 } }).toMatchTypeOf<LockerOptions>();
    // @ts-expect-error the number of replicas is required
    const noReplicas: LockerOptions = { syncReplicas: { timeoutMs: 20 } };
    void noReplicas;
  });
});

describe('the clock option', () => {
  it('takes an object with now(), performance itself included, and not a bare function', () => {
    expectTypeOf({ clock: performance }).toMatchTypeOf<LockerOptions>();
    expectTypeOf({ clock: { now: () => 1 } }).toMatchTypeOf<LockerOptions>();
    // @ts-expect-error performance.now called without performance throws
    const bare: LockerOptions = { clock: performance.now };
    void bare;
  });
});
