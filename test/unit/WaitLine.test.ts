import { describe, expect, it } from 'vitest';
import { hasWaiters, joinLine } from '../../src/wakeup/WaitLine.js';

describe('local wait line', () => {
  it('serves waiters first come, first served', async () => {
    const first = joinLine('k1');
    const second = joinLine('k1');
    const third = joinLine('k1');
    const order: string[] = [];
    const turns = [
      second.turn(Number.POSITIVE_INFINITY).then(() => order.push('second')),
      third.turn(Number.POSITIVE_INFINITY).then(() => order.push('third')),
    ];
    await first.turn(0);
    order.push('first');
    first.leave();
    await turns[0];
    second.leave();
    await turns[1];
    third.leave();
    expect(order).toEqual(['first', 'second', 'third']);
    expect(hasWaiters('k1')).toBe(false);
  });

  it('lets a waiter give up its place without blocking the rest', async () => {
    const head = joinLine('k2');
    const quitter = joinLine('k2');
    const patient = joinLine('k2');
    quitter.leave();
    head.leave();
    await patient.turn(Number.POSITIVE_INFINITY);
    patient.leave();
    expect(hasWaiters('k2')).toBe(false);
  });

  it('ends a turn early when the signal aborts or the wait runs out', async () => {
    const head = joinLine('k3');
    const waiter = joinLine('k3');
    const controller = new AbortController();
    const aborted = waiter.turn(Number.POSITIVE_INFINITY, controller.signal);
    controller.abort();
    await aborted;
    await waiter.turn(1);
    waiter.leave();
    head.leave();
    expect(hasWaiters('k3')).toBe(false);
  });
});
