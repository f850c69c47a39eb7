/**
 * The across-process case of `npm run bench:semaphore`: one contender's
 * worker processes (semaphore/worker.ts), started once and sent one "go" per
 * round, so a round pays no process start. Every child is registered with the
 * test harness's process registry (killed if the bench dies) and ends when
 * its stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { registerProcess, unregisterProcess } from '../../test/support/processRegistry.js';
import type { SemaphoreWorkerConfig, SemaphoreWorkerReport } from './worker.js';

/** A worker's stdout as lines, one at a time (also bench:systems' workers). */
export class WorkerLines {
  readonly #lines: string[] = [];
  #waiting: ((line: string) => void) | undefined;
  readonly #exited: Promise<number | null>;

  constructor(
    readonly child: ChildProcess,
    private readonly what = 'a semaphore bench worker',
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(line);
      else this.#lines.push(line);
    });
    this.#exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Its next line of output; rejects if it exits first. */
  next(): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return Promise.race([
      new Promise<string>((resolve) => {
        this.#waiting = resolve;
      }),
      this.#exited.then((code) => Promise.reject(new Error(`${this.what} exited (${code})`))),
    ]);
  }

  get exited(): Promise<number | null> {
    return this.#exited;
  }
}

export class SemaphoreProcesses {
  private constructor(private readonly workers: readonly WorkerLines[]) {}

  /** Starts `count` workers of `script` with `config`; resolves once each has warmed up. */
  static async start(script: string, config: SemaphoreWorkerConfig, count: number): Promise<SemaphoreProcesses> {
    const workers = Array.from({ length: count }, () => {
      const child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
      const pid = child.pid;
      if (pid !== undefined) {
        registerProcess({ pid });
        child.once('exit', () => unregisterProcess(pid));
      }
      return new WorkerLines(child);
    });
    const processes = new SemaphoreProcesses(workers);
    try {
      for (const line of await Promise.all(workers.map((worker) => worker.next()))) {
        if (line !== 'ready') throw new Error(`a semaphore bench worker said "${line}" instead of ready`);
      }
    } catch (error) {
      await processes.close();
      throw error;
    }
    return processes;
  }

  /** Every worker's waiters on `key` for the phase; their sections and waits together. */
  async round(key: string): Promise<SemaphoreWorkerReport> {
    for (const { child } of this.workers) child.stdin!.write(`go ${key}\n`);
    const reports = await Promise.all(this.workers.map(async (worker) => JSON.parse(await worker.next()) as SemaphoreWorkerReport));
    return {
      sections: reports.reduce((sum, r) => sum + r.sections, 0),
      waits: reports.flatMap((r) => r.waits),
      requests: reports.reduce((sum, r) => sum + r.requests, 0),
    };
  }

  async close(): Promise<void> {
    for (const { child } of this.workers) child.stdin?.end('exit\n');
    await Promise.all(this.workers.map((worker) => worker.exited));
  }
}
