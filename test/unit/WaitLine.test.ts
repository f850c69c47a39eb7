import { describe, expect, it } from 'vitest';
import { joinLine, lineKey, lineSpaceFor } from '../../src/wakeup/WaitLine.js';

const space = lineSpaceFor('unit-test-nodes');

describe('local wait line', () => {
  it('serves waiters first come, first served', async () => {
    const first = joinLine(space, 'k1');
    const second = joinLine(space, 'k1');
    const third = joinLine(space, 'k1');
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
    expect(space.hasWaiters('k1')).toBe(false);
  });

  it('lets a waiter give up its place without blocking the rest', async () => {
    const head = joinLine(space, 'k2');
    const quitter = joinLine(space, 'k2');
    const patient = joinLine(space, 'k2');
    quitter.leave();
    head.leave();
    await patient.turn(Number.POSITIVE_INFINITY);
    patient.leave();
    expect(space.hasWaiters('k2')).toBe(false);
  });

  it('ends a turn early when the signal aborts or the wait runs out', async () => {
    const head = joinLine(space, 'k3');
    const waiter = joinLine(space, 'k3');
    const controller = new AbortController();
    const aborted = waiter.turn(Number.POSITIVE_INFINITY, controller.signal);
    controller.abort();
    await aborted;
    await waiter.turn(1);
    waiter.leave();
    head.leave();
    expect(space.hasWaiters('k3')).toBe(false);
  });

  it('gives every locker on the same nodes the same lines, and separates other nodes', () => {
    expect(lineSpaceFor('a:1,b:2')).toBe(lineSpaceFor('a:1,b:2'));
    expect(lineSpaceFor('a:1,b:2')).not.toBe(lineSpaceFor('a:1'));
    const here = joinLine(lineSpaceFor('a:1,b:2'), 'k4');
    const elsewhere = joinLine(lineSpaceFor('a:1'), 'k4');
    expect([here.atHead, elsewhere.atHead]).toEqual([true, true]);
    here.leave();
    elsewhere.leave();
  });

  it('keys a multi-resource line by all its resources, in order', () => {
    expect(lineKey(['a'])).toBe('a');
    expect(lineKey(['a', 'b'])).not.toBe(lineKey(['b', 'a']));
    expect(lineKey(['a', 'b'])).not.toBe(lineKey(['ab']));
  });
});
