import { afterEach, describe, expect, it, vi } from 'vitest';
import { SlicedCalls } from '../../src/lock/SlicedCalls.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SlicedCalls', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs the queued calls in order, at most perTurn a turn of the event loop', async () => {
    const calls = new SlicedCalls(3);
    const ran: number[] = [];
    for (let i = 0; i < 8; i++) calls.queue((n: number) => ran.push(n), i);
    expect(ran).toEqual([]);
    const perTurn: number[] = [];
    while (calls.size > 0) {
      const before = ran.length;
      await turn();
      perTurn.push(ran.length - before);
    }
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(3);
  });

  it('a call that throws does not stop the others; a call queued while draining runs after those before it', async () => {
    const calls = new SlicedCalls(10);
    const ran: string[] = [];
    calls.queue(() => {
      throw new Error('its own');
    }, undefined);
    calls.queue((name: string) => {
      ran.push(name);
      calls.queue((later: string) => ran.push(later), 'queued while draining');
    }, 'second');
    calls.queue((name: string) => ran.push(name), 'third');
    while (calls.size > 0) await turn();
    expect(ran).toEqual(['second', 'third', 'queued while draining']);
  });

  it("runs on the real event loop under a test's fake timers", async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout'] });
    const calls = new SlicedCalls(2);
    let ran = 0;
    calls.queue(() => ran++, undefined);
    // No fake time is advanced: the real loop turns (a real timer, taken before faking, would too).
    await vi.waitFor(() => expect(ran).toBe(1), { timeout: 1_000, interval: 5 });
  });
});
