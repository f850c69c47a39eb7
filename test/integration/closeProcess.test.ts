/**
 * close() at scale, in a process of its own: 1,000 locks held (by hand and
 * under using()) and 50 waiting acquires on 5 nodes, one of them down.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(5);
});
afterAll(async () => {
  await nodes.stopAll();
});

const root = join(import.meta.dirname, '../..');

it('releases 1,000 locks on every live node, turns 50 waiters away, leaves no timer or socket, and the process exits by itself', async () => {
  const down = nodes.endpoints[4]?.port as number;
  await nodes.node(4).kill();
  const ports = nodes.endpoints.map((endpoint) => endpoint.port).join(',');
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'test/integration/fixtures/closeMany.ts', ports, String(down)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // A timer or a connection left behind would keep the child past this bound; it is then killed and fails below.
  const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  expect({ code, signal, errors }).toEqual({ code: 0, signal: null, errors: '' });
  const seen = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  const summary = seen['summary'] as { released: number; failed: number; leftToExpire: number; rejected: number; timedOut: boolean };
  // The down node could not answer: every lock is released on the four others, and counted failed.
  expect(summary).toEqual({ released: 0, failed: 1000, leftToExpire: 0, rejected: 50, timedOut: false });
  expect(seen['closeMs']).toBeLessThan(seen['timeoutMs'] as number);
  expect(seen['heldLeft']).toEqual([0, 0, 0, 0]);
  // Nor a wait line, a lease or anything else of these resources.
  expect(seen['keysLeft']).toEqual([0, 0, 0, 0]);
  expect(seen['ticketsWithoutTtl']).toEqual([0, 0, 0, 0]);
  expect(seen['routineReasons']).toEqual({ QUORUMLOCK_LOCKER_CLOSED: 500 });
  expect(seen['waiterOutcomes']).toEqual({ QUORUMLOCK_LOCKER_CLOSED: 50 });
  expect(seen['listenersAfter']).toEqual(seen['listenersBefore']);
  expect(seen['resourcesLeft']).toEqual([]);
  for (const client of nodes.clients().slice(0, 4)) {
    expect((await client.keys('*close-many*')).filter((key) => !key.endsWith(':ticket'))).toEqual([]);
  }
}, 120_000);
