/**
 * The across-process cases' worker processes (semaphore/worker.ts), started
 * once and sent one "go" per round, so a round pays no process start. Every
 * child is registered with the test harness's process registry (killed if the
 * bench dies) and ends when its stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { registerProcess, unregisterProcess } from '../../test/support/processRegistry.js';
import { type Ping, TIME_BASE_PINGS, type TimeBase, timeBaseOf } from '../procs/children.js';
import { sharedNow } from '../scenarios/clock.js';
import type { HoldRecord, SemaphoreWorkerConfig, SemaphoreWorkerReport } from './worker.js';

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

  /**
   * Every worker's waiters of contender `index` (of the config's kinds) on
   * `key` for the phase, the first `writers` of each asking to write; their
   * reports together, holds on this process's time base.
   */
  async round(key: string, index = 0, writers = 0): Promise<SemaphoreWorkerReport> {
    const bases = this.#bases ?? (this.#bases = await this.#timeBases());
    for (const { child } of this.workers) child.stdin!.write(`go ${index} ${key} ${writers}\n`);
    const reports = await Promise.all(this.workers.map(async (worker) => JSON.parse(await worker.next()) as SemaphoreWorkerReport));
    return {
      sections: reports.reduce((sum, r) => sum + r.sections, 0),
      waits: reports.flatMap((r) => r.waits),
      writerWaits: reports.flatMap((r) => r.writerWaits),
      requests: reports.reduce((sum, r) => sum + r.requests, 0),
      holds: reports.flatMap((r, worker) => {
        const offset = bases[worker]?.offsetMs ?? 0;
        return r.holds.map(([start, end, writer]): HoldRecord => [start - offset, end - offset, writer]);
      }),
    };
  }

  /** The largest uncertainty of the workers' time bases (ms): holds of two workers closer than that may not be ordered. */
  get timeUncertaintyMs(): number {
    return Math.max(0, ...(this.#bases ?? []).map((base) => base.uncertaintyMs));
  }

  #bases: TimeBase[] | undefined;

  async #timeBases(): Promise<TimeBase[]> {
    const bases: TimeBase[] = [];
    for (const worker of this.workers) {
      const pings: Ping[] = [];
      for (let ping = 0; ping < TIME_BASE_PINGS; ping++) {
        const sentAt = sharedNow();
        worker.child.stdin!.write('ping\n');
        const pong = await worker.next();
        const receivedAt = sharedNow();
        const workerNow = Number(/^pong (\S+)$/.exec(pong)?.[1]);
        if (!Number.isFinite(workerNow)) throw new Error(`a bench worker answered "${pong}" to a ping`);
        pings.push({ sentAt, workerNow, receivedAt });
      }
      bases.push(timeBaseOf(pings));
    }
    return bases;
  }

  async close(): Promise<void> {
    for (const { child } of this.workers) child.stdin?.end('exit\n');
    await Promise.all(this.workers.map((worker) => worker.exited));
  }
}
