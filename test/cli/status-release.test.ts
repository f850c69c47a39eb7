import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redlock } from '../../src/index.js';
import { WAITER_MARK } from '../../src/scripts/waiterMark.js';
import { freePort } from '../support/freePort.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { jsonLine, redisFlags, runCli } from './cliProcess.js';

let set: LocalNodeSet;
let clients: Redis[];
let urls: string[];
let labels: string[];
let dead: string;

beforeAll(async () => {
  set = await startNodes(3);
  clients = set.clients();
  urls = set.urls;
  labels = set.endpoints.map((e) => `${e.host}:${e.port}`);
  dead = `redis://127.0.0.1:${await freePort()}`;
});
afterAll(async () => {
  await set.stopAll();
});
beforeEach(async () => {
  await set.flushAll();
});

async function holdLock(resource: string): Promise<string> {
  const lock = await new Redlock(clients).acquire(resource, 30_000);
  return lock.value;
}

describe('quorumlock status', () => {
  it('names the holder and shows the value and PTTL on every node', async () => {
    const value = await holdLock('orders:42');
    const result = await runCli(['status', ...redisFlags(urls), '--json', 'orders:42']);
    expect(result.code).toBe(0);
    const report = jsonLine(result.stdout);
    expect(report).toMatchObject({ command: 'status', resource: 'orders:42', quorum: 2, answered: 3, held: true, holder: value, exitCode: 0 });
    const nodes = report['nodes'] as { node: string; value: string; pttlMs: number }[];
    expect(nodes.map((n) => [n.node, n.value])).toEqual(labels.map((label) => [label, value]));
    for (const node of nodes) {
      expect(node.pttlMs).toBeGreaterThan(0);
      expect(node.pttlMs).toBeLessThanOrEqual(30_000);
    }

    const human = await runCli(['status', ...redisFlags(urls), 'orders:42']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`"orders:42": held by ${value} on 3 of 3 node(s), quorum is 2`);
    for (const label of labels) expect(human.stdout).toMatch(new RegExp(`${label}\\s+${value}\\s+expires in \\d+ ms`));
  });

  it('names the holder of a key that waiters marked on some nodes, and says so', async () => {
    const value = await holdLock('orders:wanted');
    await Promise.all(clients.slice(0, 2).map((client) => client.append('orders:wanted', WAITER_MARK)));
    const result = await runCli(['status', ...redisFlags(urls), '--json', 'orders:wanted']);
    const report = jsonLine(result.stdout);
    expect(report).toMatchObject({ held: true, holder: value });
    const nodes = report['nodes'] as { value: string; waiterMarked: boolean }[];
    expect(nodes.map((n) => [n.value, n.waiterMarked])).toEqual([
      [value, true],
      [value, true],
      [value, false],
    ]);
    const human = await runCli(['status', ...redisFlags(urls), 'orders:wanted']);
    expect(human.stdout).toContain(`held by ${value} on 3 of 3 node(s)`);
    expect(human.stdout.match(/a waiter is listening/g)).toHaveLength(2);
  });

  it('says a resource nobody holds is free', async () => {
    const result = await runCli(['status', ...redisFlags(urls), '--json', 'orders:free']);
    expect(result.code).toBe(0);
    expect(jsonLine(result.stdout)).toMatchObject({ held: false, holder: null });
  });

  it('reports an unreachable node and still answers when a quorum did', async () => {
    const value = await holdLock('orders:partial');
    const result = await runCli(['status', ...redisFlags([urls[0] ?? '', urls[1] ?? '', dead]), '--json', 'orders:partial']);
    expect(result.code).toBe(0);
    const report = jsonLine(result.stdout);
    expect(report).toMatchObject({ answered: 2, holder: value });
    const nodes = report['nodes'] as { error?: string }[];
    expect(nodes[2]?.error).toMatch(/ECONNREFUSED/);
  });

  it('exits 69 when fewer than a quorum of nodes answered', async () => {
    const dead2 = `redis://127.0.0.1:${await freePort()}`;
    const result = await runCli(['status', ...redisFlags([urls[0] ?? '', dead, dead2]), 'orders:down']);
    expect(result.code).toBe(69);
    expect(result.stdout).toContain('unknown: only 1 of 3 node(s) answered, quorum is 2');
  });
});

describe('quorumlock release', () => {
  it("never deletes a lock that holds another value", async () => {
    const value = await holdLock('orders:other');
    const result = await runCli(['release', ...redisFlags(urls), '--value', 'not-the-holder', '--json', 'orders:other']);
    expect(result.code).toBe(0);
    expect(jsonLine(result.stdout)).toMatchObject({ command: 'release', released: 0, nodeCount: 3, failed: 0 });
    expect(await Promise.all(clients.map((c) => c.get('orders:other')))).toEqual([value, value, value]);
  });

  it('deletes the lock on every node when given its value', async () => {
    const value = await holdLock('orders:stuck');
    const result = await runCli(['release', ...redisFlags(urls), '--value', value, 'orders:stuck']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"orders:stuck": released on 3 of 3 node(s)');
    expect(await Promise.all(clients.map((c) => c.get('orders:stuck')))).toEqual([null, null, null]);
  });

  it('exits 69 when a node could not be asked, after releasing on the others', async () => {
    const value = await holdLock('orders:half');
    const result = await runCli(['release', ...redisFlags([urls[0] ?? '', urls[1] ?? '', dead]), '--value', value, '--json', 'orders:half']);
    expect(result.code).toBe(69);
    const report = jsonLine(result.stdout);
    expect(report).toMatchObject({ released: 2, failed: 1, exitCode: 69 });
    expect((report['nodes'] as { status: string }[]).map((n) => n.status)).toEqual(['ok', 'ok', 'error']);
    expect(await Promise.all(clients.slice(0, 2).map((c) => c.get('orders:half')))).toEqual([null, null]);
  });
});
