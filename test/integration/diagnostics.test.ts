import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { patient } from '../support/patient.js';
import { type AcquireEvent, ErrorCode, type ExtendEvent, type LostEvent, type ReleaseEvent, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
let clients: Redis[];
beforeAll(async () => {
  nodes = await startNodes(3);
  clients = nodes.clients();
});
afterAll(async () => {
  await nodes.stopAll();
});

function record<T>(name: string): { events: T[]; stop: () => void } {
  const events: T[] = [];
  const listener = (message: unknown) => events.push(message as T);
  subscribe(name, listener);
  return { events, stop: () => unsubscribe(name, listener) };
}

it('publishes acquire, extend, release and lost events with per-node outcomes and no lock value', async () => {
  const acquires = record<AcquireEvent>('quorumlock:acquire');
  const extends_ = record<ExtendEvent>('quorumlock:extend');
  const releases = record<ReleaseEvent>('quorumlock:release');
  const losses = record<LostEvent>('quorumlock:lost');
  try {
    const redlock = new Redlock(clients, { ...patient, fencing: true });
    const lock = await redlock.acquire('metrics', 10_000);
    expect(await redlock.tryAcquire('metrics', 10_000)).toBeNull();
    await lock.extend(10_000);
    // The release event is published once every node answered.
    await (await lock.release()).settled;
    const doomed = await redlock.acquire('doomed', 10_000);
    await Promise.all(clients.map((c) => c.del('doomed')));
    await doomed.extend(10_000).catch(() => undefined);

    expect(acquires.events[0]).toMatchObject({ resources: ['metrics'], ttlMs: 10_000, attempt: 1, granted: true });
    expect(acquires.events[0]!.nodes).toHaveLength(2);
    expect(acquires.events[0]!.validityMs).toBeGreaterThan(0);
    expect(typeof acquires.events[0]!.fencingToken).toBe('bigint');
    expect(acquires.events[1]).toMatchObject({ granted: false, errorCode: ErrorCode.LOCK_HELD });
    expect(extends_.events[0]).toMatchObject({ resources: ['metrics'], granted: true });
    expect(extends_.events[1]).toMatchObject({ resources: ['doomed'], granted: false, errorCode: ErrorCode.LOCK_LOST });
    expect(releases.events.some((e) => e.resources[0] === 'metrics' && e.released === 3)).toBe(true);
    expect(losses.events).toEqual([{ resources: ['doomed'], errorCode: ErrorCode.LOCK_LOST }]);

    const everything = JSON.stringify(
      [acquires.events, extends_.events, releases.events, losses.events],
      (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
    );
    expect(everything).not.toContain(lock.value);
    expect(everything).not.toContain(doomed.value);
  } finally {
    for (const r of [acquires, extends_, releases, losses]) r.stop();
  }
});
