import { describe, expect, it } from 'vitest';
import { monotonicClock } from '../../src/clock/Clock.js';
import { acquireRequest, LockNode, releaseRequest } from '../../src/node/LockNode.js';
import type { NodeBackend } from '../../src/node/NodeBackend.js';

/** A node whose releases answer only when the test says; it logs what reaches it. */
function nodeWithSlowReleases() {
  const log: string[] = [];
  const releases: (() => void)[] = [];
  const backend = {
    name: 'slow-release:1',
    acquire: (keys: readonly string[], value: string) => {
      log.push(`acquire ${value}`);
      return Promise.resolve(true);
    },
    extend: () => Promise.resolve(true),
    release: (keys: readonly string[], value: string) => {
      log.push(`release ${value}`);
      return new Promise<number>((resolve) => releases.push(() => resolve(1)));
    },
  } satisfies NodeBackend;
  return { log, answerReleases: () => releases.splice(0).forEach((answer) => answer()), node: new LockNode(backend, monotonicClock) };
}

describe('a write after a delete of its value that timed out (LateDeletes)', () => {
  it('is not sent while the delete may still run, so the delete cannot remove what the write set', async () => {
    const { log, answerReleases, node } = nodeWithSlowReleases();
    expect((await node.ask(releaseRequest(['k'], 'v', 'none'), 10)).status).toBe('timeout');
    expect((await node.ask(acquireRequest(['k'], 'v', 1_000), 1_000)).status).toBe('timeout');
    // Another value is not held back.
    expect((await node.ask(acquireRequest(['other'], 'w', 1_000), 1_000)).status).toBe('ok');
    expect(log).toEqual(['release v', 'acquire w']);
    answerReleases();
    await new Promise((resolve) => setImmediate(resolve));
    // Once the delete has run, the value may be written again.
    expect((await node.ask(acquireRequest(['k'], 'v', 1_000), 1_000)).status).toBe('ok');
    expect(log).toEqual(['release v', 'acquire w', 'acquire v']);
  });
});
