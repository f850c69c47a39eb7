/**
 * The parent's side of bench/systems/worker.ts: start a worker process on a
 * system, send it commands, read its answers, kill -9 it. Every worker is
 * registered with the test harness's process registry (killed if the parent
 * dies) and ends when its stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { registerProcess, unregisterProcess } from '../../test/support/processRegistry.js';
import { WorkerLines } from '../semaphore/processes.js';
import type { SystemSpec } from './locks/types.js';
import type { WorkerCommand } from './worker.js';

/** How a worker is run: a bundled script with plain node, or the TypeScript source through tsx (tests). */
export type WorkerScript = { readonly bundled: string } | { readonly source: string };

export class SystemWorker {
  readonly #lines: WorkerLines;

  private constructor(readonly child: ChildProcess) {
    this.#lines = new WorkerLines(child, 'a bench:systems worker');
  }

  /** Starts a worker on `spec`; resolves once it has opened the system and taken one lock. */
  static async start(script: WorkerScript, spec: SystemSpec): Promise<SystemWorker> {
    const args = 'bundled' in script ? [script.bundled] : ['--import', 'tsx', script.source];
    const child = spawn(process.execPath, [...args, JSON.stringify(spec)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const pid = child.pid;
    if (pid !== undefined) {
      registerProcess({ pid });
      child.once('exit', () => unregisterProcess(pid));
    }
    const worker = new SystemWorker(child);
    try {
      const line = await worker.#lines.next();
      if (line !== 'ready') throw new Error(`a ${spec.system} worker said "${line}" instead of ready`);
    } catch (error) {
      await worker.kill();
      throw error;
    }
    return worker;
  }

  /** Sends `command`; resolves to its answer. */
  async send<T>(command: WorkerCommand): Promise<T> {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    return JSON.parse(await this.#lines.next()) as T;
  }

  /** kill -9. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.#lines.exited;
  }

  /** Ends it cleanly (its stdin closes), or kills it after `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.#lines.exited;
    clearTimeout(timer);
  }
}
