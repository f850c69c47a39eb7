import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  await nodes.stopAll();
});

const root = join(import.meta.dirname, '../..');

it('a process that used using() and holds an unreleased lock exits by itself after disconnecting', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'test/integration/fixtures/usingThenDisconnect.ts', nodes.endpoints.map((e) => e.port).join(',')],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // If a timer or connection were left behind, the child would outlive this
  // generous bound and be killed; the assertion below then fails.
  const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  clearTimeout(killer);
  expect(output).toContain('disconnected');
  expect({ code, signal }).toEqual({ code: 0, signal: null });
}, 40_000);

it('a process whose semaphore waiters stood in line and were woken exits by itself after disconnecting', async () => {
  // 4 waiters of 1 permit, 3 rounds each: they wait in the line, subscribe and keep their places alive.
  const args = [nodes.endpoints.map((e) => e.port).join(','), 'exit-semaphore', '1', '4', '3', '5'];
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'test/integration/fixtures/semaphoreWaiter.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // A keepalive timer, a subscription or a sweep left behind would keep it past this bound.
  const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  expect(output).toContain('done');
  expect({ code, signal }).toEqual({ code: 0, signal: null });
}, 40_000);
