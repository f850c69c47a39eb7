import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { holdersOf } from './check/holders.js';
import { HistoryBuffer, ObservedRedlock } from './history/ObservedRedlock.js';
import { waitReady } from './run/scenario.js';

let set: LocalNodeSet;
let clients: Redis[];
let nodeNames: Map<string, string>;

beforeAll(async () => {
  set = await startNodes(3);
  clients = set.clients();
  await waitReady(clients);
  nodeNames = new Map(set.endpoints.map((e, i) => [`${e.host}:${e.port}`, `n${i}`]));
});
afterAll(async () => {
  await set?.stopAll();
});
beforeEach(async () => {
  await set.flushAll();
});

function observed(client: string, buffer: HistoryBuffer, options: { fencing?: boolean } = {}): ObservedRedlock {
  return new ObservedRedlock(clients, { nodeTimeoutMs: 200, retry: { baseDelayMs: 5, maxDelayMs: 20 }, ...options }, { client, sink: buffer, nodeNames });
}

describe('chaos history recorder (ObservedRedlock)', () => {
  it('records acquire, extend and release rounds with node outcomes and the validity on the shared time base', async () => {
    const buffer = new HistoryBuffer();
    const locker = observed('c0', buffer);
    const lock = await locker.acquire('rec:a', 5_000);
    const acquiredUntil = lock.validUntil;
    await lock.extend(8_000);
    await lock.release();

    expect(buffer.ops.map((op) => [op.id, op.kind, op.result])).toEqual([
      ['c0#1', 'acquire', 'ok'],
      ['c0#2', 'extend', 'ok'],
      ['c0#3', 'release', 'ok'],
    ]);
    const [acquire, extend, release] = buffer.ops;
    expect(acquire?.value).toBe(lock.value);
    expect(acquire?.quorum).toBe(2);
    expect(acquire?.validUntil).toBe(performance.timeOrigin + acquiredUntil);
    expect(extend?.validUntil).toBe(performance.timeOrigin + lock.validUntil);
    expect(acquire?.nodes.every((n) => n.status === 'ok' && /^n[0-2]$/.test(n.node))).toBe(true);
    // release() resolves once a quorum has deleted the keys; the third may still be on its way.
    expect(release?.released).toBeGreaterThanOrEqual(2);
    expect(acquire!.invokedAt).toBeLessThanOrEqual(acquire!.completedAt);
    expect(buffer.handovers).toEqual([{ client: 'c0', value: lock.value, at: expect.any(Number) }]);

    const [holder] = holdersOf({ ops: buffer.ops, handovers: buffer.handovers, faults: [] });
    expect(holder?.start).toBe(acquire?.completedAt);
    expect(holder?.end).toBe(release?.invokedAt);
  });

  it('records every attempt of a waiting acquire as its own round with the same value, refusals with their outcomes', async () => {
    const buffer = new HistoryBuffer();
    const holder = await observed('c0', buffer).acquire('rec:b', 150);
    const waiter = await observed('c1', buffer).acquire('rec:b', 1_000, { acquireTimeoutMs: 5_000 });
    await waiter.release();

    const attempts = buffer.ops.filter((op) => op.client === 'c1' && op.kind === 'acquire');
    expect(attempts.length).toBeGreaterThan(1);
    expect(new Set(attempts.map((op) => op.value))).toEqual(new Set([waiter.value]));
    expect(attempts.at(-1)?.result).toBe('ok');
    const refused = attempts[0];
    expect(refused?.result).toBe('held');
    expect(refused?.errorCode).toBe('QUORUMLOCK_LOCK_HELD');
    expect(refused?.nodes.filter((n) => n.status === 'held').length).toBeGreaterThanOrEqual(2);
    expect(holder.value).not.toBe(waiter.value);
  });

  it("records using()'s automatic extensions and its release", async () => {
    const buffer = new HistoryBuffer();
    await observed('c0', buffer).using('rec:c', 300, () => new Promise((resolve) => setTimeout(resolve, 500)));
    const kinds = buffer.ops.map((op) => op.kind);
    expect(kinds[0]).toBe('acquire');
    expect(kinds.filter((k) => k === 'extend').length).toBeGreaterThanOrEqual(1);
    expect(kinds.at(-1)).toBe('release');
    expect(buffer.handovers).toHaveLength(1);
  });

  it('records the fencing tokens of each resource when the locker hands them out', async () => {
    const buffer = new HistoryBuffer();
    const locker = observed('c0', buffer, { fencing: true });
    const first = await locker.acquire(['rec:d', 'rec:e'], 1_000);
    await first.release();
    const second = await locker.acquire('rec:d', 1_000);
    await second.release();

    const grants = buffer.ops.filter((op) => op.kind === 'acquire' && op.result === 'ok');
    expect(grants[0]?.fencingTokens).toEqual(first.fencingTokens?.map(String));
    expect(grants[0]?.fencingTokens).toHaveLength(2);
    expect(buffer.handovers[1]?.fencingTokens).toEqual([String(second.fencingToken)]);
    const holders = holdersOf({ ops: buffer.ops, handovers: buffer.handovers, faults: [] });
    expect(holders[1]!.fencingTokens.get('rec:d')! > holders[0]!.fencingTokens.get('rec:d')!).toBe(true);
  });
});
