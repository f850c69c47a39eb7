import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { whenAborted } from '../../src/shared/abortListeners.js';

describe('whenAborted', () => {
  it('tells every wait through one listener on the signal, once each', () => {
    const controller = new AbortController();
    const told: number[] = [];
    for (let i = 0; i < 50; i++) whenAborted(controller.signal, () => told.push(i));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    controller.abort();
    expect(told).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('forgets a wait on its own, and takes the listener off once none is left', () => {
    const controller = new AbortController();
    const told: string[] = [];
    const forgetA = whenAborted(controller.signal, () => told.push('a'));
    const forgetB = whenAborted(controller.signal, () => told.push('b'));
    forgetA();
    forgetA();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    forgetB();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // A wait after that gets a listener again.
    whenAborted(controller.signal, () => told.push('c'));
    controller.abort();
    expect(told).toEqual(['c']);
  });

  it('the same function twice is two waits; a wait that throws does not keep the others from being told', () => {
    const controller = new AbortController();
    let count = 0;
    const onAbort = () => count++;
    const forget = whenAborted(controller.signal, onAbort);
    whenAborted(controller.signal, () => {
      throw new Error('its own failure');
    });
    whenAborted(controller.signal, onAbort);
    forget();
    controller.abort();
    expect(count).toBe(1);
  });
});
