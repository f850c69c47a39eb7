import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  ErrorCode,
  InvalidArgumentError,
  isQuorumLockError,
  LimitMismatchError,
  LockExpiredError,
  LockHeldError,
  LockLostError,
  LockReleasedError,
  NodeTimeoutError,
  QuorumLockError,
  QuorumUnreachableError,
  ReplicaSyncError,
  UpgradeRefusedError,
  ValidityExhaustedError,
} from '../../src/index.js';
import type { NodeOutcome } from '../../src/shared/outcome.js';

const outcomes: NodeOutcome[] = [{ node: 'a:1', status: 'held', ms: 1 }];
const vote = { resources: ['r'], nodeCount: 1, quorum: 1, outcomes };

// One of every class the library throws; codes not listed here are checked below.
const samples: readonly QuorumLockError[] = [
  new InvalidArgumentError('ttlMs', 'bad'),
  new LockHeldError(vote),
  new QuorumUnreachableError(vote),
  new ValidityExhaustedError(['r'], 0, outcomes),
  new LockLostError(['r'], outcomes),
  new LockExpiredError(['r']),
  new LockReleasedError(['r']),
  new AbortedError('stop'),
  new NodeTimeoutError('a:1', 50),
  new ReplicaSyncError('a:1', 0, 1, 25),
  new LimitMismatchError('r', 2, 3, 'a:1'),
  new UpgradeRefusedError('r'),
];

describe('isQuorumLockError', () => {
  it('with one argument, is true for every error of the library and nothing else', () => {
    for (const error of samples) expect(isQuorumLockError(error)).toBe(true);
    for (const other of [new Error('x'), { code: ErrorCode.LOCK_HELD }, null, undefined, 'QUORUMLOCK_LOCK_HELD']) {
      expect(isQuorumLockError(other)).toBe(false);
    }
  });

  it('with a code, is true only for an error of that code', () => {
    for (const error of samples) {
      for (const code of Object.values(ErrorCode)) {
        expect(isQuorumLockError(error, code), `${error.name} against ${code}`).toBe(error.code === code);
      }
    }
  });

  it('with a code, is true only for the class of that code, so the narrowing is sound', () => {
    // The base class is public: one made by hand with a code lacks the class's fields.
    expect(isQuorumLockError(new QuorumLockError(ErrorCode.LOCK_HELD, 'hand-made'), ErrorCode.LOCK_HELD)).toBe(false);
    // Duck-typed look-alikes (a serialized error, say) are not the class either.
    expect(isQuorumLockError({ code: ErrorCode.LOCK_HELD, heldOnNodes: 1 }, ErrorCode.LOCK_HELD)).toBe(false);
    expect(isQuorumLockError(new Error('x'), ErrorCode.LOCK_HELD)).toBe(false);
  });

  it('knows a class for every code', () => {
    for (const code of Object.values(ErrorCode)) expect(() => isQuorumLockError(undefined, code)).not.toThrow();
  });

  it('throws on a code that is not one of ErrorCode’s values, rather than never matching', () => {
    const misspelt = 'QUORUMLOCK_LOCK_HLED' as ErrorCode;
    expect(() => isQuorumLockError(new LockHeldError(vote), misspelt)).toThrow(InvalidArgumentError);
    expect(() => isQuorumLockError(new LockHeldError(vote), 'LOCK_HELD' as ErrorCode)).toThrow(/ErrorCode's values, got "LOCK_HELD"/);
    // Inherited names of a plain object are not codes either.
    expect(() => isQuorumLockError(new LockHeldError(vote), 'toString' as ErrorCode)).toThrow(InvalidArgumentError);
  });
});
