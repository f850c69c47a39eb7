import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exitCodes.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { readEvents, redisFlags, runCli, startCli, waitFor, WORKER } from './cliProcess.js';

let set: LocalNodeSet;
let dir: string;
let count = 0;

beforeAll(async () => {
  set = await startNodes(3);
  dir = await mkdtemp(join(tmpdir(), 'quorumlock-cli-modes-'));
});
afterAll(async () => {
  await set.stopAll();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await set.flushAll();
});

function files(): { log: string; go: string } {
  count++;
  return { log: join(dir, `events-${count}.log`), go: join(dir, `go-${count}`) };
}

function holder(log: string, go: string, id: string): string[] {
  return ['--', process.execPath, WORKER, '--log', log, '--id', id, '--hold-until', go];
}

async function started(log: string, ids: readonly string[]): Promise<void> {
  await waitFor(`workers ${ids.join(', ')} to start`, () => ids.every((id) => readEvents(log).some((e) => e.event === 'start' && e.id === id)));
}

describe('quorumlock exec --limit, --shared, --exclusive', () => {
  it('--limit K runs the command while at most K holders run it, on a quorum of 3 nodes', async () => {
    const { log, go } = files();
    const running = ['a', 'b'].map((id) => startCli(['exec', ...redisFlags(set.urls), '--limit', '2', '--ttl', '20s', 'jobs', ...holder(log, go, id)]));
    await started(log, ['a', 'b']);
    const third = await runCli(['exec', ...redisFlags(set.urls), '--limit', '2', 'jobs', '--', process.execPath, '-e', '']);
    expect(third.code).toBe(ExitCode.BUSY);
    await writeFile(go, '');
    expect((await Promise.all(running.map((cli) => cli.result))).map((r) => r.code)).toEqual([0, 0]);
    const after = await runCli(['exec', ...redisFlags(set.urls), '--limit', '2', 'jobs', '--', process.execPath, '-e', '']);
    expect(after.code).toBe(0);
  }, 60_000);

  it('--shared holders run together; --exclusive is refused while they run', async () => {
    const { log, go } = files();
    const readers = ['r1', 'r2'].map((id) => startCli(['exec', ...redisFlags(set.urls), '--shared', '--ttl', '20s', 'config', ...holder(log, go, id)]));
    await started(log, ['r1', 'r2']);
    const writer = await runCli(['exec', ...redisFlags(set.urls), '--exclusive', 'config', '--', process.execPath, '-e', '']);
    expect(writer.code).toBe(ExitCode.BUSY);
    await writeFile(go, '');
    expect((await Promise.all(readers.map((cli) => cli.result))).map((r) => r.code)).toEqual([0, 0]);
  }, 60_000);

  it('refuses --limit with --fencing, and a limit that is not a whole number', async () => {
    const both = await runCli(['exec', ...redisFlags(set.urls), '--limit', '2', '--fencing', 'jobs', '--', 'true']);
    expect(both.code).toBe(ExitCode.USAGE);
    const bad = await runCli(['exec', ...redisFlags(set.urls), '--limit', '0', 'jobs', '--', 'true']);
    expect(bad.code).toBe(ExitCode.USAGE);
    expect(bad.stderr).toMatch(/--limit/);
  }, 30_000);
});
