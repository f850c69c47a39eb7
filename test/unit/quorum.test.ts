import { describe, expect, it } from 'vitest';
import { denialCause, quorumFor, verdict } from '../../src/redlock/quorum.js';

describe('quorum', () => {
  it('is a strict majority of the configured nodes', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(quorumFor)).toEqual([1, 2, 2, 3, 3, 4, 4]);
  });

  it('grants at quorum without waiting for the other nodes', () => {
    expect(verdict(5, 3, 3, 0)).toBe('granted');
    expect(verdict(5, 3, 2, 2)).toBe('pending');
  });

  it('denies as soon as failures exceed N - quorum', () => {
    expect(verdict(5, 3, 0, 2)).toBe('pending');
    expect(verdict(5, 3, 0, 3)).toBe('denied');
    expect(verdict(5, 3, 2, 3)).toBe('denied');
  });

  it('resolves an even split of 4 nodes instead of waiting forever', () => {
    expect(verdict(4, 3, 2, 2)).toBe('denied');
  });

  it('calls a loss an outage only when failures alone make the quorum impossible', () => {
    expect(denialCause(5, 3, 3)).toBe('unreachable');
    expect(denialCause(5, 3, 2)).toBe('held');
    expect(denialCause(1, 1, 1)).toBe('unreachable');
    expect(denialCause(1, 1, 0)).toBe('held');
  });
});
