import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestDeadline } from '../../src/node/RequestDeadline.js';
import { FakeClock } from '../support/FakeClock.js';

describe('RequestDeadline', () => {
  let clock: FakeClock;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = new FakeClock(1_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires every request still pending with one timer, and none that ended', () => {
    const deadline = new RequestDeadline(clock, 50);
    const expired: string[] = [];
    const doneA = deadline.track(() => expired.push('a'));
    deadline.track(() => expired.push('b'));
    deadline.track(() => expired.push('c'));
    expect(vi.getTimerCount()).toBe(1);
    doneA();
    vi.advanceTimersByTime(49);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b', 'c']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer once every request has ended', () => {
    const deadline = new RequestDeadline(clock, 50);
    const onExpire = vi.fn();
    const ends = [deadline.track(onExpire), deadline.track(onExpire)];
    for (const end of ends) end();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(onExpire).not.toHaveBeenCalled();
  });

  it('gives a request tracked after the others ended only the time left', () => {
    const deadline = new RequestDeadline(clock, 50);
    deadline.track(() => undefined)();
    clock.advance(30);
    const onExpire = vi.fn();
    deadline.track(onExpire);
    vi.advanceTimersByTime(19);
    expect(onExpire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onExpire).toHaveBeenCalledOnce();
  });

  it('ignores an end reported after the request expired', () => {
    const deadline = new RequestDeadline(clock, 10);
    const onExpire = vi.fn();
    const end = deadline.track(onExpire);
    const other = deadline.track(() => undefined);
    vi.advanceTimersByTime(10);
    end();
    other();
    expect(onExpire).toHaveBeenCalledOnce();
    expect(deadline.sentAt).toBe(1_000);
  });
});
