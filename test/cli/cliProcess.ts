/**
 * Runs the real quorumlock CLI as a child process, from source (bundled once
 * per run by test/support/cliBundle.ts), with a clean environment.
 * Every CLI process is registered with the harness's process registry, so a
 * failing test never leaves one behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { registerProcess, unregisterProcess } from '../support/processRegistry.js';

export const ROOT = join(import.meta.dirname, '../..');
export const WORKER = join(import.meta.dirname, 'fixtures/worker.mjs');
/** The CLI bundled from src/cli/main.ts for this run. */
export const CLI = inject('quorumlockCli');

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the CLI has exited; a CLI still running after `limitMs` is SIGKILLed. */
  readonly result: Promise<CliResult>;
  /** What the CLI has printed so far, and its exit once it has exited: for a test's failure message. */
  sofar(): string;
}

export interface CliOptions {
  /** Added to a minimal environment (PATH, HOME); the parent's QUORUMLOCK_* never leak in. */
  readonly env?: Record<string, string>;
  readonly limitMs?: number;
}

export function startCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', CLI, ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/tmp', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the CLI');
  registerProcess({ pid });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const limit = setTimeout(() => child.kill('SIGKILL'), options.limitMs ?? 25_000);
  let exit: string | undefined;
  const result = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      unregisterProcess(pid);
      exit = `exited with ${code ?? signal}`;
      resolve({ code, signal, stdout, stderr });
    });
  });
  const sofar = (): string => `the CLI (pid ${pid}) ${exit ?? 'still runs'}; stdout: ${JSON.stringify(stdout)}; stderr: ${JSON.stringify(stderr)}`;
  return { child, pid, result, sofar };
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}

/** `--redis URL` for each URL. */
export function redisFlags(urls: readonly string[]): string[] {
  return urls.flatMap((url) => ['--redis', url]);
}

export interface WorkerEvent {
  readonly event: 'start' | 'end' | 'signal';
  readonly id: string;
  readonly signal?: string;
  readonly resource?: string | null;
  readonly value?: string | null;
  readonly validityMs?: string | null;
  readonly fencingToken?: string | null;
}

export function readEvents(log: string): WorkerEvent[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as WorkerEvent);
}

/**
 * Polls until `predicate` holds; fails with `what` after `limitMs`, or at once
 * when `cli` (the process that should bring it about) has exited, with what
 * it printed: a CLI that gave up says why, where a timeout would not.
 */
export async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, limitMs = 20_000, cli?: CliProcess): Promise<void> {
  const deadline = performance.now() + limitMs;
  let exited = false;
  void cli?.result.then(() => (exited = true));
  while (!(await predicate())) {
    // One more look after the exit: what the CLI did just before it is there to see.
    if (exited && (await predicate())) return;
    if (exited) throw new Error(`${what} never happened: ${cli?.sofar()}`);
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}${cli ? `: ${cli.sofar()}` : ''}`);
    await sleep(20);
  }
}

/** Parses the one JSON line quorumlock printed (stdout for results, stderr for failures). */
export function jsonLine(text: string): Record<string, unknown> {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${text}`);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}
