/**
 * What a system costs to run, measured the same way for every one: its
 * server processes and their memory (proportional set size, from /proc), and the fsync
 * calls its servers make per acquire + release, counted by strace attached to
 * every thread of every server process (Postgres: the postmaster's children
 * too) while the cycles run. strace slows the servers; that pass is not a
 * latency measurement.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { descendants, treeMemoryBytes, treeSize } from './servers/serverProcess.js';

export const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;

/** Processes and memory (bytes, PSS) of the servers `pids` (each with its descendants). */
export function footprint(pids: readonly number[]): { processes: number; memoryBytes: number } {
  return {
    processes: pids.reduce((sum, pid) => sum + treeSize(pid), 0),
    memoryBytes: pids.reduce((sum, pid) => sum + treeMemoryBytes(pid), 0),
  };
}

/** fsync, fdatasync and sync_file_range calls of the servers `pids` while `work` runs; undefined without strace. */
export async function countFsyncs(pids: readonly number[], work: () => Promise<void>): Promise<number | undefined> {
  if (!hasStrace) {
    await work();
    return undefined;
  }
  const tasks = pids.flatMap((pid) => [pid, ...descendants(pid)]).flatMap(threadsOf);
  const strace = spawn('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync,sync_file_range', ...tasks.flatMap((tid) => ['-p', String(tid)])], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  strace.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => strace.once('exit', () => resolve()));
  try {
    await attached(strace, () => output, tasks.length);
    await work();
    // A write's fsync may come just after its reply (etcd's backend commit batches every 100 ms).
    await sleep(300);
  } finally {
    strace.kill('SIGINT');
    await exited;
  }
  let calls = 0;
  for (const line of output.split('\n')) {
    const match = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)(?:\s+\d+)?\s+(fsync|fdatasync|sync_file_range)\s*$/.exec(line);
    if (match) calls += Number(match[1]);
  }
  return calls;
}

function threadsOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

/** Until strace says it attached to every task (or 5 s). */
async function attached(strace: ChildProcess, output: () => string, tasks: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && strace.exitCode === null) {
    if ((output().match(/attached/g) ?? []).length >= tasks) return;
    await sleep(50);
  }
}
