import { performance } from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_OPTIONS, InvalidArgumentError } from '../../src/index.js';
import { resolveLockerOptions } from '../../src/lock/options.js';

function refusal(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('the clock option, as the README documents it', () => {
  it('defaults to an object whose now() reads performance.now()', () => {
    const clock = resolveLockerOptions(undefined).clock;
    expect(clock).toBe(DEFAULT_OPTIONS.clock);
    expect(typeof clock).toBe('object');
    const before = performance.now();
    const read = clock.now();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(performance.now());
  });

  it('takes performance itself, and any object with now(), as given', () => {
    expect(resolveLockerOptions({ clock: performance }).clock).toBe(performance);
    const fake = { now: () => 1_000 };
    expect(resolveLockerOptions({ clock: fake }).clock).toBe(fake);
  });

  it('refuses a bare function without calling it, and says how to pass one', () => {
    const now = vi.fn(() => 5);
    for (const clock of [now, performance.now]) {
      const error = refusal(() => resolveLockerOptions({ clock }));
      expect(error.argument).toBe('options.clock');
      expect(error.message).toBe(
        'Invalid options.clock: expected an object with a now() method, got a function: pass { now: yourFunction }, or performance itself',
      );
    }
    expect(now).not.toHaveBeenCalled();
  });

  it('still names what it got when it is neither', () => {
    expect(refusal(() => resolveLockerOptions({ clock: 5 })).message).toBe(
      'Invalid options.clock: expected an object with a now() method, got 5',
    );
  });
});
