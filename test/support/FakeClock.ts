/**
 * A manual monotonic clock for unit tests: satisfies the library's
 * `Clock` interface (`{ now(): number }`, monotonic milliseconds).
 *
 *   const clock = new FakeClock(1_000);
 *   clock.advance(250);  // now() === 1250
 *   clock.set(2_000);    // now() === 2000; going backwards throws
 */
export class FakeClock {
  private current: number;

  constructor(startMs = 0) {
    FakeClock.check(startMs, 'startMs');
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Move forward by `ms` (>= 0). */
  advance(ms: number): void {
    FakeClock.check(ms, 'ms');
    if (ms < 0) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    this.current += ms;
  }

  /** Jump to `ms`, which must not be earlier than now() (the clock is monotonic). */
  set(ms: number): void {
    FakeClock.check(ms, 'ms');
    if (ms < this.current) {
      throw new RangeError(`FakeClock.set: ${ms} is before now() = ${this.current}; the clock is monotonic`);
    }
    this.current = ms;
  }

  private static check(value: number, name: string): void {
    if (!Number.isFinite(value)) throw new RangeError(`FakeClock: ${name} must be finite, got ${value}`);
  }
}
