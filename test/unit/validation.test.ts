import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/shared/errors.js';
import { resolveAcquireOptions, resolveLockerOptions, DEFAULT_OPTIONS } from '../../src/lock/options.js';
import { assertTtl, MAX_TTL_MS, normalizeResources } from '../../src/lock/validate.js';

function argumentOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).argument;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('input validation', () => {
  it('accepts a string or a non-empty array of distinct non-empty strings', () => {
    expect(normalizeResources('a')).toEqual(['a']);
    expect(normalizeResources(['a', 'b'])).toEqual(['a', 'b']);
  });

  it.each([
    ['an empty array', [], 'resources'],
    ['an empty string', '', 'resources'],
    ['a number', 42, 'resources'],
    ['null', null, 'resources'],
    ['a non-string entry', ['a', 7], 'resources[1]'],
    ['an empty entry', ['a', ''], 'resources[1]'],
    ['a duplicate entry', ['a', 'b', 'a'], 'resources[2]'],
  ])('rejects %s, naming the argument', (_, value, argument) => {
    expect(argumentOf(() => normalizeResources(value))).toBe(argument);
  });

  it.each([0, -1, Number.NaN, 1.5, Number.POSITIVE_INFINITY, MAX_TTL_MS + 1, '100', undefined])(
    'rejects ttlMs %s',
    (ttl) => {
      expect(argumentOf(() => assertTtl(ttl))).toBe('ttlMs');
    },
  );

  it.each([
    [{ driftFactor: -0.1 }, 'options.driftFactor'],
    [{ driftFactor: Number.NaN }, 'options.driftFactor'],
    [{ driftMs: -1 }, 'options.driftMs'],
    [{ nodeTimeoutMs: 0 }, 'options.nodeTimeoutMs'],
    [{ nodeTimeoutMs: 2.5 }, 'options.nodeTimeoutMs'],
    [{ acquireTimeoutMs: -5 }, 'options.acquireTimeoutMs'],
    [{ retry: { retries: -1 } }, 'options.retry.retries'],
    [{ retry: { baseDelayMs: 100, maxDelayMs: 10 } }, 'options.retry.maxDelayMs'],
    [{ retry: { factor: 0.5 } }, 'options.retry.factor'],
    [{ retry: 'fast' }, 'options.retry'],
    [{ extendAtFraction: 1 }, 'options.extendAtFraction'],
    [{ clock: {} }, 'options.clock'],
    [{ reentrant: 'yes' }, 'options.reentrant'],
    [{ retryCount: 10 }, 'options.retryCount'],
    ['fast', 'options'],
  ])('rejects locker options %j, naming %s', (options, argument) => {
    expect(argumentOf(() => resolveLockerOptions(options))).toBe(argument);
  });

  it('rejects a signal that is not an AbortSignal', () => {
    expect(argumentOf(() => resolveAcquireOptions({ signal: {} }, DEFAULT_OPTIONS))).toBe('options.signal');
  });

  it('fills in the documented defaults', () => {
    const resolved = resolveLockerOptions({ driftMs: 5 });
    expect(resolved.driftMs).toBe(5);
    expect(resolved.driftFactor).toBe(0.01);
    expect(resolved.nodeTimeoutMs).toBe(50);
    expect(resolved.retry).toEqual(DEFAULT_OPTIONS.retry);
    expect(resolved.reentrant).toBe(true);
  });
});

describe('odd inputs found by the property tests', () => {
  it('describes an object whose constructor name is a symbol without throwing', () => {
    expect(argumentOf(() => normalizeResources({ constructor: { name: Symbol('odd') } }))).toBe('resources');
  });

  it('refuses a clock whose now() does not return finite milliseconds', () => {
    expect(argumentOf(() => resolveLockerOptions({ clock: { now: () => Number.NaN } }))).toBe('options.clock');
    expect(argumentOf(() => resolveLockerOptions({ clock: { now: () => 5n } }))).toBe('options.clock');
    expect(argumentOf(() => resolveLockerOptions({ clock: { now: () => Symbol('t') } }))).toBe('options.clock');
  });
});
