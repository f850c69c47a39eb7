/**
 * Worker processes for the multi-process scenario: spawn, start, calibrate
 * the shared time base, pause (SIGSTOP), stop and collect their histories.
 * Every worker is killed by killAllWorkers() (afterAll) if still alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { sharedNow } from '../history/timeBase.js';
import type { FromWorker, ToWorker, WorkerConfig } from '../worker/protocol.js';

const ROOT = join(import.meta.dirname, '../../..');
const ENTRY = 'test/chaos/worker/chaosWorker.ts';
const live = new Set<WorkerProcess>();

export type WorkerHistory = Extract<FromWorker, { type: 'history' }>;

export class WorkerProcess {
  readonly child: ChildProcess;
  private stderr = '';
  private lastAcquisitions = 0;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private paused = false;

  /** `entry`: the worker's script (the wait-line scenario runs worker/lineWorker.ts). */
  constructor(
    readonly name: string,
    entry = ENTRY,
  ) {
    this.child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', entry], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8192);
    });
    this.child.on('message', (message: FromWorker) => {
      if (message.type === 'progress') this.lastAcquisitions = message.acquisitions;
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    live.add(this);
    void this.exited.then(() => live.delete(this));
  }

  get acquisitions(): number {
    return this.lastAcquisitions;
  }

  async start(config: WorkerConfig): Promise<void> {
    const ready = this.next('ready');
    this.send({ type: 'start', config });
    await ready;
  }

  /**
   * How far this worker's time base disagrees with ours, in ms (0 when every
   * ping's reply time fell between its send and receive times). Each round
   * bounds the offset between the bases; the rounds' bounds are intersected.
   */
  async timeBaseDeviationMs(rounds = 5): Promise<number> {
    let lo = -Infinity;
    let hi = Infinity;
    for (let i = 0; i < rounds; i++) {
      const sentAt = sharedNow();
      const pong = this.next('pong');
      this.send({ type: 'ping', sentAt });
      const { workerNow } = await pong;
      const receivedAt = sharedNow();
      lo = Math.max(lo, workerNow - receivedAt);
      hi = Math.min(hi, workerNow - sentAt);
    }
    if (lo > hi) return Math.max(Math.abs(lo), Math.abs(hi)); // inconsistent rounds: report the worst
    return lo > 0 ? lo : hi < 0 ? -hi : 0;
  }

  pause(): void {
    this.paused = true;
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.paused = false;
    this.child.kill('SIGCONT');
  }

  /** Stops the workload, returns the history, and waits for the process to exit by itself. */
  async stop(timeoutMs = 30_000): Promise<WorkerHistory> {
    if (this.paused) this.resume();
    const history = this.next('history');
    this.send({ type: 'stop' });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`worker ${this.name} did not stop within ${timeoutMs} ms. stderr:\n${this.stderr}`)), timeoutMs);
    });
    try {
      const result = await Promise.race([history, timeout]);
      const exit = await Promise.race([this.exited, timeout]);
      if (exit.code !== 0) throw new Error(`worker ${this.name} exited with ${exit.code ?? exit.signal}. stderr:\n${this.stderr}`);
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    }
  }

  private send(message: ToWorker): void {
    this.child.send(message);
  }

  /** The next message of `type`; rejects if the worker exits first. */
  private next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: FromWorker): void => {
        if (message.type !== type) return;
        cleanup();
        resolve(message as Extract<FromWorker, { type: T }>);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        cleanup();
        reject(new Error(`worker ${this.name} exited (${code ?? signal}) before sending '${type}'. stderr:\n${this.stderr}`));
      };
      const cleanup = (): void => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
    });
  }
}

/** SIGKILL every worker still running (afterAll, or after a failed scenario). */
export function killAllWorkers(): void {
  for (const worker of live) worker.kill();
}
