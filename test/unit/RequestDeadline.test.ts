import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue } from '../../src/node/DeadlineQueue.js';
import { RequestDeadline } from '../../src/node/RequestDeadline.js';
import { FakeClock } from '../support/FakeClock.js';

const realSetImmediate = setImmediate;

/** Moves fake time on by `ms`, then lets the immediates its timers set run: a deadline expires on one, once the replies already in were read. */
async function advance(ms: number): Promise<void> {
  vi.advanceTimersByTime(ms);
  await new Promise((resolve) => realSetImmediate(resolve));
}

describe('RequestDeadline', () => {
  let clock: FakeClock;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = new FakeClock(1_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires every request still pending with one timer, and none that ended', async () => {
    const deadline = new RequestDeadline(clock, 50);
    const expired: string[] = [];
    const doneA = deadline.track(() => expired.push('a'));
    deadline.track(() => expired.push('b'));
    deadline.track(() => expired.push('c'));
    expect(vi.getTimerCount()).toBe(1);
    doneA();
    await advance(49);
    expect(expired).toEqual([]);
    await advance(1);
    expect(expired).toEqual(['b', 'c']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer once every request has ended', async () => {
    const deadline = new RequestDeadline(clock, 50);
    const onExpire = vi.fn();
    const ends = [deadline.track(onExpire), deadline.track(onExpire)];
    for (const end of ends) end();
    expect(vi.getTimerCount()).toBe(0);
    await advance(1_000);
    expect(onExpire).not.toHaveBeenCalled();
  });

  it('gives a request tracked after the others ended only the time left', async () => {
    const deadline = new RequestDeadline(clock, 50);
    deadline.track(() => undefined)();
    clock.advance(30);
    const onExpire = vi.fn();
    deadline.track(onExpire);
    await advance(19);
    expect(onExpire).not.toHaveBeenCalled();
    await advance(1);
    expect(onExpire).toHaveBeenCalledOnce();
  });

  it('ignores an end reported after the request expired', async () => {
    const deadline = new RequestDeadline(clock, 10);
    const onExpire = vi.fn();
    const end = deadline.track(onExpire);
    const other = deadline.track(() => undefined);
    await advance(10);
    end();
    other();
    expect(onExpire).toHaveBeenCalledOnce();
    expect(deadline.sentAt).toBe(1_000);
  });

  describe('with a queue of the same length', () => {
    it('serves every deadline with one timer, in the order they were made, and drops those that ended', async () => {
      const queue = new DeadlineQueue(clock, 50);
      const expired: string[] = [];
      const first = new RequestDeadline(clock, 50, queue);
      const endFirst = first.track(() => expired.push('first'));
      clock.advance(10);
      await advance(10);
      const second = new RequestDeadline(clock, 50, queue);
      second.track(() => expired.push('second'));
      second.track(() => expired.push('second, other node'));
      expect(vi.getTimerCount()).toBe(1);
      endFirst();
      clock.advance(40);
      await advance(40);
      // The first ended in time: nothing expires when the timer reaches it.
      expect(expired).toEqual([]);
      expect(vi.getTimerCount()).toBe(1);
      clock.advance(10);
      await advance(10);
      expect(expired).toEqual(['second', 'second, other node']);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('never expires a deadline early, and leaves no timer once the queue is empty', async () => {
      const queue = new DeadlineQueue(clock, 50);
      const onExpire = vi.fn();
      const deadline = new RequestDeadline(clock, 50, queue);
      const end = deadline.track(onExpire);
      clock.advance(49);
      await advance(49);
      expect(onExpire).not.toHaveBeenCalled();
      end();
      clock.advance(1);
      await advance(1);
      expect(onExpire).not.toHaveBeenCalled();
      expect(vi.getTimerCount()).toBe(0);
    });

    it('uses its own timer when its length differs from the queue’s', async () => {
      const queue = new DeadlineQueue(clock, 50);
      const onExpire = vi.fn();
      new RequestDeadline(clock, 20, queue).track(onExpire);
      clock.advance(20);
      await advance(20);
      expect(onExpire).toHaveBeenCalledOnce();
    });

    it('gives a request tracked after its deadline left the queue only the time left', async () => {
      const queue = new DeadlineQueue(clock, 50);
      const deadline = new RequestDeadline(clock, 50, queue);
      deadline.track(() => undefined)();
      new RequestDeadline(clock, 50, queue).track(() => undefined);
      clock.advance(50);
      await advance(50);
      const late = vi.fn();
      deadline.track(late);
      expect(late).not.toHaveBeenCalled();
      await advance(0);
      expect(late).toHaveBeenCalledOnce();
    });
  });
});
