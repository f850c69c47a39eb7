import { describe, expect, it } from 'vitest';
import { LateWrites } from '../../src/node/LateWrites.js';
import { GivenUpAttempts } from '../../src/redlock/GivenUpAttempts.js';
import type { NodeOutcome } from '../../src/shared/outcome.js';

const ok: NodeOutcome = { node: 'a', status: 'ok', ms: 1 };
const timeout: NodeOutcome = { node: 'b', status: 'timeout', ms: 50 };
const error: NodeOutcome = { node: 'c', status: 'error', ms: 1, error: new Error('x') };
const settled = () => Promise.resolve([ok, timeout]);

describe('GivenUpAttempts', () => {
  it('notes only attempts with a write given up on: a timeout or a node not yet answered, not an error (an answer)', async () => {
    const attempts = new GivenUpAttempts();
    attempts.note('v', ['k'], [ok, error], settled);
    expect(attempts.take('v', undefined).released).toEqual([]);
    attempts.note('v', ['k'], [ok, undefined], settled);
    attempts.note('v', ['k'], [timeout], settled);
    // One undo per set of keys, for the nodes where any attempt on them timed out.
    const [released] = attempts.take('v', undefined).released;
    expect(released?.keys).toEqual(['k']);
    expect(await released?.mayFollowUndo).toEqual([false, true]);
    // Taken once: the acquire is over.
    expect(attempts.take('v', undefined).released).toEqual([]);
  });

  it('undoes again where a node had not answered when the vote was decided and then took the keys: its undo went out before (a hole in the vote\'s outcomes)', async () => {
    const attempts = new GivenUpAttempts();
    const held: NodeOutcome = { node: 'b', status: 'held', ms: 1 };
    // As a vote decides: a node not yet answered is a hole, which some() and map() skip.
    const decided = new Array<NodeOutcome | undefined>(3);
    decided[1] = held;
    attempts.note('v', ['k'], decided, () => Promise.resolve([ok, held, error]));
    const [released] = attempts.take('v', undefined).released;
    // Node 0 answered ok after its undo went out; node 2's error may have too: a script resent after NOSCRIPT
    // behind the undo can run before the connection breaks (property coordinator.test.ts, seed 1379452262).
    expect(await released?.mayFollowUndo).toEqual([true, false, true]);
  });

  it('leaves the lock to watch its end only where a write of its keys had timed out, not where one was merely unanswered', () => {
    const attempts = new GivenUpAttempts();
    attempts.note('v', ['k'], new Array<NodeOutcome | undefined>(2), settled);
    expect(attempts.take('v', ['k'])).toEqual({ released: [], coveredByLock: false });
    attempts.note('v', ['k'], [timeout, undefined], settled);
    expect(attempts.take('v', ['k'])).toEqual({ released: [], coveredByLock: true });
  });

  it('leaves the attempts on the keys the lock holds to the lock, and releases those on other keys (a semaphore\'s slots)', () => {
    const attempts = new GivenUpAttempts();
    attempts.note('v', ['limit', 'slot:0'], [timeout], settled);
    attempts.note('v', ['limit', 'slot:1'], [timeout], settled);
    const { released, coveredByLock } = attempts.take('v', ['limit', 'slot:1']);
    // The limit record is the lock's too (it never holds a value; it is left alone).
    expect(released.map((attempt) => attempt.keys)).toEqual([['slot:0']]);
    expect(coveredByLock).toBe(true);
    expect(attempts.take('w', ['k'])).toEqual({ released: [], coveredByLock: false });
  });

  it('never undoes a key the lock holds, when an attempt on another slot set shared it (two permits of three)', async () => {
    const attempts = new GivenUpAttempts();
    attempts.note('v', ['limit', 'slot:0', 'slot:1'], [ok, timeout], settled);
    attempts.note('v', ['limit', 'slot:2', 'slot:0'], [timeout, ok], () => Promise.resolve([timeout, ok]));
    const { released, coveredByLock } = attempts.take('v', ['limit', 'slot:1', 'slot:2']);
    // slot:1 and slot:2 are the lock's: only slot:0 is undone, where a write of it timed out.
    expect(released.map((attempt) => attempt.keys)).toEqual([['slot:0']]);
    expect(await released[0]?.mayFollowUndo).toEqual([true, true]);
    expect(coveredByLock).toBe(true);
  });
});

describe('LateWrites.abandon', () => {
  it('sends the undo again after each late write still out, even after a later write of the value', async () => {
    const late = new LateWrites();
    let land!: () => void;
    late.track('v', new Promise<void>((resolve) => (land = resolve)));
    const sent: string[] = [];
    late.abandon('v', async () => void sent.push('undo'));
    late.rewrite('v');
    expect(sent).toEqual([]);
    land();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['undo']);
    expect(late.size).toBe(0);
  });

  it('does nothing for a value with no late write out', () => {
    const late = new LateWrites();
    late.abandon('v', () => Promise.reject(new Error('must not be sent')));
    expect(late.size).toBe(0);
  });
});
