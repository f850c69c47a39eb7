import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireRequest, LockNode } from '../../src/node/LockNode.js';
import type { NodeBackend } from '../../src/node/NodeBackend.js';
import { vote } from '../../src/redlock/vote.js';
import { FakeClock } from '../support/FakeClock.js';

/** A backend whose acquire answers as told: a value, a rejection, a synchronous throw, or never. */
function backend(name: string, answer: 'ok' | 'held' | 'reject' | 'throw' | 'never'): NodeBackend & { calls: number } {
  const node = {
    name,
    calls: 0,
    acquire(): Promise<boolean> {
      node.calls++;
      if (answer === 'throw') throw new Error(`${name} threw`);
      if (answer === 'reject') return Promise.reject(new Error(`${name} failed`));
      if (answer === 'never') return new Promise<boolean>(() => undefined);
      return Promise.resolve(answer === 'ok');
    },
    extend: () => Promise.resolve(false),
    release: () => Promise.resolve(0),
  };
  return node;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LockNode.send', () => {
  it('turns a synchronous throw into one error outcome', () => {
    const node = new LockNode(backend('a', 'throw'), new FakeClock());
    const deliver = vi.fn();
    node.send(acquireRequest(['r'], 'v', 1000), 50, deliver);
    expect(deliver).toHaveBeenCalledOnce();
    expect(deliver.mock.calls[0]?.[0]).toMatchObject({ node: 'a', status: 'error', error: { message: 'a threw' } });
  });

  it('delivers a timeout once, and never the reply that comes after it', async () => {
    vi.useFakeTimers();
    let answer: (ok: boolean) => void = () => undefined;
    const late: NodeBackend = { ...backend('b', 'ok'), acquire: () => new Promise((resolve) => (answer = resolve)) };
    const deliver = vi.fn();
    new LockNode(late, new FakeClock()).send(acquireRequest(['r'], 'v', 1000), 50, deliver);
    await vi.advanceTimersByTimeAsync(50);
    answer(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(deliver).toHaveBeenCalledOnce();
    expect(deliver.mock.calls[0]?.[0]).toMatchObject({ status: 'timeout' });
  });
});

describe('vote', () => {
  it('decides on synchronous failures, still sends to every node, and settles with each outcome', async () => {
    const backends = [backend('a', 'throw'), backend('b', 'reject'), backend('c', 'throw'), backend('d', 'ok'), backend('e', 'held')];
    const nodes = backends.map((b) => new LockNode(b, new FakeClock()));
    const result = await vote(nodes, 3, acquireRequest(['r'], 'v', 1000), 50);
    expect(result.granted).toBe(false);
    expect(backends.map((b) => b.calls)).toEqual([1, 1, 1, 1, 1]);
    const settled = await result.settled;
    expect(settled.map((o) => [o.node, o.status])).toEqual([
      ['a', 'error'],
      ['b', 'error'],
      ['c', 'error'],
      ['d', 'ok'],
      ['e', 'held'],
    ]);
  });

  it('settles when the last node times out, after deciding without it', async () => {
    vi.useFakeTimers();
    const backends = [backend('a', 'ok'), backend('b', 'ok'), backend('c', 'never')];
    const nodes = backends.map((b) => new LockNode(b, new FakeClock()));
    const result = await vote(nodes, 2, acquireRequest(['r'], 'v', 1000), 50);
    expect(result.granted).toBe(true);
    expect(result.byNode[2]).toBeUndefined();
    let settled: readonly { status: string }[] | undefined;
    void result.settled.then((all) => (settled = all));
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled?.map((o) => o.status)).toEqual(['ok', 'ok', 'timeout']);
  });

  it('tells, at each moment after deciding, which nodes have not answered yet', async () => {
    vi.useFakeTimers();
    let answer: (ok: boolean) => void = () => undefined;
    const slow: NodeBackend = { ...backend('c', 'ok'), acquire: () => new Promise((resolve) => (answer = resolve)) };
    const nodes = [backend('a', 'ok'), backend('b', 'ok'), slow, backend('d', 'never')].map((b) => new LockNode(b, new FakeClock()));
    const result = await vote(nodes, 2, acquireRequest(['r'], 'v', 1000), 50);
    expect(result.granted).toBe(true);
    expect(result.stillOut()).toEqual([false, false, true, true]);
    answer(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(result.stillOut()).toEqual([false, false, false, true]);
    // The decided outcomes stay as they were when the vote was decided.
    expect(result.byNode.map((o) => o?.status)).toEqual(['ok', 'ok', undefined, undefined]);
    await vi.advanceTimersByTimeAsync(50);
    expect(result.stillOut()).toEqual([false, false, false, false]);
  });

  it.each([
    ['ok', true, 'ok'],
    ['held', false, 'held'],
    ['reject', false, 'error'],
    ['throw', false, 'error'],
  ] as const)('on one node, decides and settles with its one outcome (%s)', async (answer, granted, status) => {
    const only = backend('a', answer);
    const result = await vote([new LockNode(only, new FakeClock())], 1, acquireRequest(['r'], 'v', 1000), 50);
    expect(result.granted).toBe(granted);
    expect(result.outcomes.map((o) => o.status)).toEqual([status]);
    expect(result.byNode.map((o) => o?.status)).toEqual([status]);
    expect((await result.settled).map((o) => o.status)).toEqual([status]);
    expect(result.stillOut()).toEqual([false]);
    expect(only.calls).toBe(1);
  });

  it('on one node, decides a timeout when the node never answers', async () => {
    vi.useFakeTimers();
    const pending = vote([new LockNode(backend('a', 'never'), new FakeClock())], 1, acquireRequest(['r'], 'v', 1000), 50);
    await vi.advanceTimersByTimeAsync(50);
    const result = await pending;
    expect(result.granted).toBe(false);
    expect(result.outcomes.map((o) => o.status)).toEqual(['timeout']);
  });
});
