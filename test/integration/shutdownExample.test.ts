/**
 * examples/shutdown.ts runs as a user runs it, against a real node: its
 * import of 'quorumlock' is pointed at the source, and it must check its own
 * result, print its summary and exit by itself.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runToExit } from '../support/childFixture.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(1);
});
afterAll(async () => {
  await nodes.stopAll();
});

const root = join(import.meta.dirname, '../..');

it('examples/shutdown.ts closes its locker on SIGTERM, frees the lock, and exits by itself', async () => {
  const source = readFileSync(join(root, 'examples/shutdown.ts'), 'utf8').replace("from 'quorumlock'", `from '${join(root, 'src/index.ts')}'`);
  const copy = 'test/integration/fixtures/.shutdown-example.ts';
  writeFileSync(join(root, copy), source);
  const port = nodes.endpoints[0]?.port as number;
  const { code, signal, stdout, stderr } = await runToExit(copy, [`redis://127.0.0.1:${port}`], 25_000);
  const output = stdout + stderr;
  expect({ code, signal }, output).toEqual({ code: 0, signal: null });
  expect(output).toMatch(/released (1, failed 0|0, failed 1), left to expire 0, turned away 1/);
  // Where the one node answered the release (it may miss the default 50 ms node timeout on a loaded host), the key is gone at once.
  if (output.includes('released 1')) expect(await nodes.clients()[0]?.exists('jobs:nightly-report')).toBe(0);
}, 40_000);
