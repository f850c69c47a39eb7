/**
 * Runs one docs block as a user would run it: a standalone ES module in a
 * fresh Node process (through tsx), quorumlock from src/, Redis on
 * localhost:6379..6383 mapped onto `ports` (blockPreload.ts). The process must
 * exit by itself, with code 0, within the time limit.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Block, ROOT } from './blocks.js';
import { formatPortMap } from './portMap.js';
import { preamble } from './typecheck.js';

export interface RunOutcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

export function failed(outcome: RunOutcome): boolean {
  return outcome.timedOut || outcome.code !== 0;
}

const PRELOAD = join(import.meta.dirname, 'blockPreload.ts');

/** Inside the repository, so that the blocks' imports of ioredis, redis and the rest resolve from its node_modules. */
export async function blockDir(): Promise<string> {
  const dir = join(ROOT, 'node_modules/.cache/quorumlock-docs-examples', String(process.pid));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  return dir;
}

export async function runBlock(
  block: Block,
  index: number,
  options: { dir: string; ports: readonly number[]; userNames: readonly string[]; timeoutMs: number },
): Promise<RunOutcome> {
  let file = block.path;
  if (file === undefined) {
    file = join(options.dir, `block-${index}.mts`);
    await writeFile(file, preamble(options.userNames, 'stub') + block.code);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PRELOAD, file], {
    cwd: options.dir,
    env: { ...process.env, QUORUMLOCK_EXAMPLE_PORTS: formatPortMap(options.ports), NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // The whole group: a block may have started processes of its own.
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, options.timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  return { code, signal, timedOut, stdout, stderr };
}
