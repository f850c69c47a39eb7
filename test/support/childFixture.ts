import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const children = new Set<ChildProcess>();

/**
 * Starts test/integration/fixtures/<fixture>.ts in a child process with
 * `args`; `said` resolves once its output contains `text`. killChildren()
 * ends every child still running.
 */
export function startChild(fixture: string, args: readonly string[]): { child: ChildProcess; said: (text: string) => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', `test/integration/fixtures/${fixture}.ts`, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  const waiting = new Set<() => void>();
  child.stdout?.on('data', (chunk) => {
    out += String(chunk);
    for (const check of waiting) check();
  });
  const said = (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!out.includes(text)) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
    });
  return { child, said };
}

/** Kills (-9) every child startChild started that is still running. */
export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** How a child run to its end went: its exit, and what it printed on each stream. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the TypeScript program `script` (a path from the repository's root)
 * in a child process with `args` until it exits by itself; one still running
 * after `limitMs` is killed (-9), which its exit then shows: a timer or a
 * connection left behind keeps a process alive.
 */
export async function runToExit(script: string, args: readonly string[], limitMs: number): Promise<ChildExit> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', script, ...args], {
    cwd: join(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  return { code, signal, stdout, stderr };
}
