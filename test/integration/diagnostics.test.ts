import { inspect } from 'node:util';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { patient } from '../support/patient.js';
import {
  type AcquireEvent,
  ErrorCode,
  type EventNodeOutcome,
  type ExtendEvent,
  type LostEvent,
  RedisLock,
  type ReleaseEvent,
  type ReleaseSettledEvent,
  Redlock,
} from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { recordChannel } from '../support/recordChannel.js';

/** The class name of a Redis error reply in the client the lockers use: ioredis's ReplyError, node-redis's ErrorReply (named Error). */
const REPLY_ERROR = process.env['QUORUMLOCK_TEST_CLIENT']?.startsWith('node-redis') ? 'Error' : 'ReplyError';

let nodes: LocalNodeSet;
let clients: Redis[];
beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
});
afterAll(async () => {
  await nodes.stopAll();
});

/** Records every channel until `stop()`. */
function recordAll() {
  const all = {
    acquire: recordChannel<AcquireEvent>('quorumlock:acquire'),
    extend: recordChannel<ExtendEvent>('quorumlock:extend'),
    release: recordChannel<ReleaseEvent>('quorumlock:release'),
    releaseSettled: recordChannel<ReleaseSettledEvent>('quorumlock:release-settled'),
    lost: recordChannel<LostEvent>('quorumlock:lost'),
  };
  return { ...all, stop: () => Object.values(all).forEach((r) => r.stop()) };
}

/** The event as a log line or a tracing backend gets it: nothing lost, nothing left as `{}`. */
function expectJsonRoundTrip(event: object): void {
  expect(JSON.parse(JSON.stringify(event))).toStrictEqual(event);
}

/** Errors reach events as `{ name, message, code? }` only: ioredis's `error.command.args` holds the lock value. */
function expectSummarizedErrors(outcomes: readonly EventNodeOutcome[]): void {
  for (const { error } of outcomes) {
    if (error === undefined) continue;
    expect(Object.getPrototypeOf(error)).toBe(Object.prototype);
    expect(Object.keys(error).sort()).toEqual('code' in error ? ['code', 'message', 'name'] : ['message', 'name']);
  }
}

it('publishes acquire, extend, release and lost events with per-node outcomes and no lock value', async () => {
  const events = recordAll();
  try {
    const redlock = new Redlock(clients, { ...patient, fencing: true });
    const lock = await redlock.acquire('metrics', 10_000);
    expect(await redlock.tryAcquire('metrics', 10_000)).toBeNull();
    await lock.extend(10_000);
    await (await lock.release()).settled;
    const doomed = await redlock.acquire('doomed', 10_000);
    await Promise.all(clients.map((c) => c.del('doomed')));
    await doomed.extend(10_000).catch(() => undefined);

    expect(events.acquire.events[0]).toMatchObject({ resources: ['metrics'], ttlMs: 10_000, attempt: 1, granted: true });
    expect(events.acquire.events[0]!.nodes).toHaveLength(2);
    expect(events.acquire.events[0]!.validityMs).toBeGreaterThan(0);
    expect(events.acquire.events[0]!.fencingToken).toBe(String(lock.fencingToken));
    expect(events.acquire.events[1]).toMatchObject({ granted: false, errorCode: ErrorCode.LOCK_HELD });
    expect(events.extend.events[0]).toMatchObject({ resources: ['metrics'], granted: true });
    expect(events.extend.events[1]).toMatchObject({ resources: ['doomed'], granted: false, errorCode: ErrorCode.LOCK_LOST });
    await vi.waitFor(() => expect(events.releaseSettled.events.some((e) => e.resources[0] === 'metrics' && e.released === 3)).toBe(true));
    expect(events.lost.events).toEqual([{ resources: ['doomed'], errorCode: ErrorCode.LOCK_LOST }]);

    const everything = JSON.stringify([
      events.acquire.events,
      events.extend.events,
      events.release.events,
      events.releaseSettled.events,
      events.lost.events,
    ]);
    expect(everything).not.toContain(lock.value);
    expect(everything).not.toContain(doomed.value);
  } finally {
    events.stop();
  }
});

describe('every event survives JSON.stringify with its useful fields', () => {
  it('acquire granted and denied, with and without fencing; extend granted and denied; release; lost', async () => {
    const events = recordAll();
    try {
      const fenced = new Redlock(clients, { ...patient, fencing: true });
      const plain = new Redlock(clients, patient);

      const fencedLock = await fenced.acquire(['json:f1', 'json:f2'], 10_000);
      expect(await fenced.tryAcquire('json:f1', 10_000)).toBeNull();
      const plainLock = await plain.acquire('json:p', 10_000);
      expect(await plain.tryAcquire('json:p', 10_000)).toBeNull();
      await plainLock.extend(10_000);
      await Promise.all(clients.map((c) => c.del('json:p')));
      await expect(plainLock.extend(10_000)).rejects.toMatchObject({ code: ErrorCode.LOCK_LOST });
      await (await fencedLock.release()).settled;

      const [fencedGrant, fencedDenial, plainGrant, plainDenial] = events.acquire.events;
      expect(fencedGrant).toMatchObject({ resources: ['json:f1', 'json:f2'], granted: true, fencingToken: String(fencedLock.fencingToken) });
      expect(BigInt(fencedGrant!.fencingToken!)).toBe(fencedLock.fencingToken);
      expect(fencedDenial).toMatchObject({ resources: ['json:f1'], granted: false, errorCode: ErrorCode.LOCK_HELD });
      expect(plainGrant).toMatchObject({ resources: ['json:p'], granted: true });
      expect(plainGrant).not.toHaveProperty('fencingToken');
      expect(plainDenial).toMatchObject({ granted: false, errorCode: ErrorCode.LOCK_HELD });
      expect(plainDenial!.nodes.some((n) => n.status === 'held')).toBe(true);
      expect(events.extend.events.map((e) => [e.granted, e.errorCode])).toEqual([
        [true, undefined],
        [false, ErrorCode.LOCK_LOST],
      ]);
      expect(events.lost.events).toEqual([{ resources: ['json:p'], errorCode: ErrorCode.LOCK_LOST }]);
      await vi.waitFor(() => expect(events.releaseSettled.events).toHaveLength(1));
      expect(events.release.events[0]).toMatchObject({ resources: ['json:f1', 'json:f2'] });
      expect(events.releaseSettled.events[0]).toMatchObject({ resources: ['json:f1', 'json:f2'], released: 3 });
      expect(events.releaseSettled.events[0]!.nodes.map((n) => n.status)).toEqual(['ok', 'ok', 'ok']);

      for (const kind of [events.acquire, events.extend, events.release, events.releaseSettled, events.lost]) {
        expect(kind.events.length).toBeGreaterThan(0);
        for (const event of kind.events) expectJsonRoundTrip(event);
      }
      // Per-node fencing tokens (bigints) and key counts stay out of the events.
      for (const event of [...events.acquire.events, ...events.release.events, ...events.releaseSettled.events]) {
        for (const node of event.nodes) expect(Object.keys(node)).toEqual(['node', 'status', 'ms']);
      }
    } finally {
      events.stop();
    }
  });

  it('node errors become { name, message, code? }, without the command that carries the lock value', async () => {
    const events = recordAll();
    const quick = new Redlock(clients, { nodeTimeoutMs: 300 });
    try {
      // A list where a lock key should be: the scripts' GET fails there with a ReplyError.
      await Promise.all([clients[0]!.lpush('json:wrongtype', 'x'), clients[1]!.lpush('json:wrongtype', 'x')]);
      const fenced = new Redlock(clients, { ...patient, fencing: true });
      await expect(fenced.tryAcquire('json:wrongtype', 10_000)).rejects.toMatchObject({ code: ErrorCode.QUORUM_UNREACHABLE });
      const denial = events.acquire.events.at(-1)!;
      expect(denial).toMatchObject({ granted: false, errorCode: ErrorCode.QUORUM_UNREACHABLE });
      const failed = denial.nodes.filter((n) => n.status === 'error');
      expect(failed).toHaveLength(2);
      for (const node of failed) expect(node.error).toMatchObject({ name: REPLY_ERROR, message: expect.stringMatching(/WRONGTYPE/) });

      // A release whose key turned into a list on one node, and a node that never answers.
      const lock = await quick.acquire('json:errors', 10_000);
      await clients[0]!.del('json:errors');
      await clients[0]!.lpush('json:errors', 'x');
      await nodes.node(2).pause();
      try {
        await (await lock.release()).settled;
      } finally {
        await nodes.node(2).resume();
      }
      await vi.waitFor(() => expect(events.releaseSettled.events).toHaveLength(1));
      const [wrongType, ok, silent] = events.releaseSettled.events[0]!.nodes;
      expect(events.releaseSettled.events[0]!.released).toBe(1);
      expect(wrongType).toMatchObject({ status: 'error', error: { name: REPLY_ERROR, message: expect.stringMatching(/WRONGTYPE/) } });
      expect(ok).toMatchObject({ status: 'ok' });
      expect(silent).toMatchObject({
        status: 'timeout',
        error: { name: 'NodeTimeoutError', code: ErrorCode.NODE_TIMEOUT, message: expect.stringMatching(/300 ms/) },
      });

      const all = [...events.acquire.events, ...events.release.events, ...events.releaseSettled.events];
      for (const event of all) {
        expectSummarizedErrors(event.nodes);
        expectJsonRoundTrip(event);
      }
      expect(JSON.stringify(all)).not.toContain(lock.value);
    } finally {
      events.stop();
      await Promise.all(clients.map((c) => c.del('json:wrongtype', 'json:errors')));
    }
  });
});

describe('release events', () => {
  it.each([
    ['Redlock on 3 nodes', () => new Redlock(clients, patient), 3],
    ['RedisLock', () => new RedisLock(clients[0]!, patient), 1],
  ] as const)('%s: quorumlock:release is published before `await release()` resumes, every node on release-settled after', async (_, locker, n) => {
    const events = recordAll();
    try {
      const lock = await locker().acquire('order:7', 10_000);
      const result = await lock.release();
      // Nothing was awaited since release() resolved: a counter read here must include this release.
      expect(events.release.events).toHaveLength(1);
      expect(events.release.events[0]).toMatchObject({ resources: ['order:7'], released: result.released });
      expect(events.release.events[0]!.nodes.map((node) => node.node)).toEqual(result.outcomes.map((outcome) => outcome.node));

      const settled = await result.settled;
      await vi.waitFor(() => expect(events.releaseSettled.events).toHaveLength(1));
      expect(events.releaseSettled.events[0]).toMatchObject({ resources: ['order:7'], released: n });
      expect(settled.released).toBe(n);
      expect(events.releaseSettled.events[0]!.durationMs).toBeGreaterThanOrEqual(events.release.events[0]!.durationMs);
      expect(events.release.events).toHaveLength(1);
    } finally {
      events.stop();
    }
  });
});

describe('release() result', () => {
  it('has the documented shape only: released, nodes, outcomes, and settled as an accessor', async () => {
    const lock = await new Redlock(clients, patient).acquire(['shape:a', 'shape:b'], 10_000);
    const result = await lock.release();
    expect(Object.keys(result)).toEqual(['released', 'nodes', 'outcomes']);
    expect(result.settled).toBeInstanceOf(Promise);
    expect(JSON.parse(JSON.stringify(result))).toEqual({
      released: result.outcomes.length,
      nodes: 3,
      outcomes: result.outcomes.map(({ node, ms }) => ({ node, status: 'ok', ms, released: 1 })),
    });
    expect(inspect(result, { showHidden: true })).not.toMatch(/vote|Ballot|byNode/);

    const settled = await result.settled;
    expect(Object.keys(settled)).toEqual(['released', 'nodes', 'outcomes']);
    expect(JSON.parse(JSON.stringify(settled))).toEqual({
      released: 3,
      nodes: 3,
      outcomes: settled.outcomes.map(({ node, ms }) => ({ node, status: 'ok', ms, released: 1 })),
    });
    // Idempotent: the same result, not a second round of deletions reporting 0.
    expect(await lock.release()).toBe(result);
  });

  it('`released` counts nodes at every level: each node deleted 2 keys, yet counts once', async () => {
    const lock = await new RedisLock(clients[0]!, patient).acquire(['count:a', 'count:b'], 10_000);
    const result = await lock.release();
    expect(result.released).toBe(1);
    expect(result.outcomes).toEqual([expect.objectContaining({ status: 'ok', released: 1 })]);
    expect((await result.settled).outcomes).toEqual([expect.objectContaining({ status: 'ok', released: 1 })]);
  });
});
