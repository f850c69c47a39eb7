import { beforeAll, describe, expect, it } from 'vitest';
import { resolveLockerOptions } from '../../src/lock/options.js';
import { LockNode } from '../../src/node/LockNode.js';
import type { NodeBackend } from '../../src/node/NodeBackend.js';
import { QuorumCoordinator } from '../../src/redlock/QuorumCoordinator.js';
import { InMemoryNode } from '../../src/testing/index.js';

/** A node whose extends answer only when the test says, and whose releases fail `failingReleases` times. */
function slowNode() {
  const log: string[] = [];
  const pendingExtends: ((ok: boolean) => void)[] = [];
  const pendingAcquires: ((ok: boolean) => void)[] = [];
  const node = {
    failingReleases: 0,
    /** Acquires answer only when the test says (answerAcquires). */
    slowAcquires: false,
    log,
    answerExtends: (): void => {
      for (const answer of pendingExtends.splice(0)) answer(true);
    },
    answerAcquires: (): void => {
      for (const answer of pendingAcquires.splice(0)) answer(true);
    },
    backend: {
      name: 'slow:1',
      acquire: () => {
        log.push('acquire');
        if (node.slowAcquires) return new Promise<boolean>((resolve) => pendingAcquires.push(resolve));
        return Promise.resolve(true);
      },
      extend: () => {
        log.push('extend');
        return new Promise<boolean>((resolve) => pendingExtends.push(resolve));
      },
      release: () => {
        log.push('release');
        if (node.failingReleases > 0) {
          node.failingReleases--;
          return Promise.reject(new Error('READONLY You can\'t write against a read only replica.'));
        }
        return Promise.resolve(1);
      },
    } satisfies NodeBackend,
  };
  return node;
}

class FakeLocker extends QuorumCoordinator {
  constructor(backends: readonly NodeBackend[]) {
    const settings = resolveLockerOptions({ wakeUp: false, reentrant: false, nodeTimeoutMs: 20, driftMs: 0, driftFactor: 0 });
    super(
      backends.map((backend) => new LockNode(backend, settings.clock)),
      settings,
    );
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('late writes', () => {
  it('sends the release of a lock again once an extend it gave up on has answered', async () => {
    const node = slowNode();
    const lock = await new FakeLocker([node.backend]).tryAcquire('r', 10_000);
    await expect(lock?.extend(30_000)).rejects.toMatchObject({ code: 'QUORUMLOCK_QUORUM_UNREACHABLE' });
    await lock?.release();
    expect(node.log).toEqual(['acquire', 'extend', 'release']);
    // The extend lands after the release: the release follows it.
    node.answerExtends();
    await expect.poll(() => node.log).toEqual(['acquire', 'extend', 'release', 'release']);
  });

  it('releases a lock that expires unreleased after an extend it gave up on, and tries again while the node refuses', async () => {
    const node = slowNode();
    const lock = await new FakeLocker([node.backend]).tryAcquire('r', 300);
    await expect(lock?.extend(30_000)).rejects.toMatchObject({ code: 'QUORUMLOCK_QUORUM_UNREACHABLE' });
    node.answerExtends();
    node.failingReleases = 2;
    // Nobody reads the signal or releases: the lock's end is watched because of the failed extend.
    await sleep(350);
    expect(lock?.ended).toBe(true);
    // Two refused, the third deleted the key (tries 200 ms apart).
    await expect.poll(() => node.log.filter((entry) => entry === 'release').length, { timeout: 2000 }).toBe(3);
  });

  it('sends no release when a lock expires whose writes all answered', async () => {
    const node = slowNode();
    const lock = await new FakeLocker([node.backend]).tryAcquire('r', 100);
    void lock?.signal;
    await sleep(150);
    expect(lock?.ended).toBe(true);
    expect(node.log).toEqual(['acquire']);
  });

  it('undoes an acquire it gave up on again after its write answers, once the acquire has ended without the lock', async () => {
    const node = slowNode();
    node.slowAcquires = true;
    const locker = new FakeLocker([node.backend]);
    await expect(locker.acquire('r', 10_000, { acquireTimeoutMs: 100 })).rejects.toMatchObject({ code: 'QUORUMLOCK_QUORUM_UNREACHABLE' });
    const attempts = node.log.filter((entry) => entry === 'acquire').length;
    expect(attempts).toBeGreaterThan(0);
    // Each attempt's undo went out right behind it, and once more when the acquire ended (its writes were still out).
    await expect.poll(() => node.log.filter((entry) => entry === 'release')).toHaveLength(attempts + 1);
    // The writes land now, after their undos: the acquire is over, so the undo follows each of them.
    const before = node.log.length;
    node.answerAcquires();
    await expect.poll(() => node.log.slice(before)).toEqual(Array<string>(attempts).fill('release'));
  });

  it('leaves an acquire\'s late write to the lock when a later attempt took the keys with the same value', async () => {
    const node = slowNode();
    node.slowAcquires = true;
    const locker = new FakeLocker([node.backend]);
    const acquiring = locker.acquire('r', 300, { acquireTimeoutMs: 5000 });
    await expect.poll(() => node.log.includes('release'), { timeout: 1000 }).toBe(true);
    node.slowAcquires = false;
    const lock = await acquiring;
    // The first attempt's write lands while the lock holds the keys: nothing is deleted under it.
    const before = node.log.length;
    node.answerAcquires();
    await sleep(20);
    expect(node.log.slice(before)).toEqual([]);
    // Nobody releases: its end does, since that write may keep the keys past it.
    await sleep(350);
    expect(lock.ended).toBe(true);
    await expect.poll(() => node.log.slice(before)).toEqual(['release']);
  });

  it('undoes again behind an acquire script resent after NOSCRIPT once it was given up on, whose own reply never comes', async () => {
    await InMemoryNode.ready();
    // A node's first run of the acquire script (its cache empty, as after a restart): NOSCRIPT comes back after
    // the node timeout, the attempt's undos have run by then, and the script resent in full lands behind
    // them with its reply lost (property coordinator.test.ts, "delayed restarts", seed -1522509097).
    const node = new InMemoryNode('resend:1', performance, (request) => {
      if (request.op === 'acquire' && request.command === 'EVALSHA') return { replyAfterMs: 100 };
      if (request.op === 'acquire' && request.command === 'EVAL') return { fate: 'lose-reply' };
      return {};
    });
    const locker = new FakeLocker([node]);
    await expect(locker.tryAcquire(['a', 'b'], 10_000)).rejects.toMatchObject({ code: 'QUORUMLOCK_QUORUM_UNREACHABLE' });
    await expect.poll(() => node.requests.some((r) => r.op === 'acquire' && r.command === 'EVAL' && r.appliedAt !== undefined)).toBe(true);
    const resent = node.requests.find((r) => r.op === 'acquire' && r.command === 'EVAL')!;
    // The resent write took the keys; an undo follows it and deletes them.
    expect(resent.changed?.map((change) => change.key)).toEqual(['a', 'b']);
    await expect.poll(() => node.requests.some((r) => r.op === 'release' && r.seq > resent.seq && r.appliedAt !== undefined)).toBe(true);
    expect([node.get('a'), node.get('b')]).toEqual([undefined, undefined]);
  });
});
