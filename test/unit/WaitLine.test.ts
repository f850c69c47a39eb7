import { describe, expect, it } from 'vitest';
import { joinLine, leaveAlone, Line, lineKey, lineSpaceFor, Place, standAlone } from '../../src/wakeup/WaitLine.js';

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

  it('builds no line for a caller alone, and puts it at the head once someone joins', async () => {
    let headPlace: Place | undefined;
    const lone = {
      formLine(): Line {
        // As ContendedWait does: the lone caller takes the head of the line it builds.
        const line = new Line();
        space.lines.set('k0', line);
        headPlace = new Place(space, 'k0', line);
        return line;
      },
    };
    expect(standAlone(space, 'k0', lone)).toBe(true);
    expect(space.hasWaiters('k0')).toBe(true);
    expect(standAlone(space, 'k0', { formLine: lone.formLine })).toBe(false);
    const next = joinLine(space, 'k0');
    expect(headPlace?.atHead).toBe(true);
    expect(next.atHead).toBe(false);
    // The lone caller has a place now: leaving alone no longer applies.
    leaveAlone(space, 'k0', lone);
    expect(space.hasWaiters('k0')).toBe(true);
    const turn = next.turn(Number.POSITIVE_INFINITY);
    headPlace?.leave(true);
    await turn;
    expect(next.atHead).toBe(true);
    expect(next.followsLocalHolder).toBe(true);
    next.leave();
    expect(space.hasWaiters('k0')).toBe(false);
    // Alone again, and gone without a trace.
    expect(standAlone(space, 'k0', lone)).toBe(true);
    leaveAlone(space, 'k0', lone);
    expect(space.hasWaiters('k0')).toBe(false);
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
