import { describe, expect, it } from 'vitest';
import { HeldLocks } from '../../src/lock/HeldLocks.js';
import type { Lock } from '../../src/lock/Lock.js';

const lock = (name: string) => ({ name, heldSlot: -1 }) as unknown as Lock & { name: string };

describe('HeldLocks', () => {
  it('lists what was added and not removed, whatever the order of removal, and keeps each slot true', () => {
    const held = new HeldLocks();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(lock) as [ReturnType<typeof lock>, ReturnType<typeof lock>, ReturnType<typeof lock>, ReturnType<typeof lock>];
    for (const each of [a, b, c, d]) held.add(each);
    held.add(b); // twice: still once
    held.delete(b); // from the middle: the last takes its slot
    expect(held.all().map((each) => (each as typeof a).name).sort()).toEqual(['a', 'c', 'd']);
    expect(b.heldSlot).toBe(-1);
    held.delete(b); // not there: nothing happens
    held.delete(a);
    held.delete(d);
    expect(held.all()).toEqual([c]);
    expect(c.heldSlot).toBe(0);
    held.delete(c);
    expect(held.all()).toEqual([]);
    held.add(a);
    expect(held.all()).toEqual([a]);
  });

  it('ignores a lock another list holds', () => {
    const mine = new HeldLocks();
    const theirs = new HeldLocks();
    const [a, b] = [lock('a'), lock('b')];
    mine.add(a);
    theirs.add(b);
    mine.delete(b);
    expect(theirs.all()).toEqual([b]);
    expect(mine.all()).toEqual([a]);
  });
});
