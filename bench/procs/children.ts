/**
 * The child processes of the procs scenario: spawn, talk over IPC, kill.
 * Every child is registered with the test harness's process registry, which
 * SIGKILLs whatever is still registered when the bench exits or gets
 * SIGINT/SIGTERM/SIGHUP; a child whose parent vanished exits by itself (its
 * IPC channel closes). Nothing is left behind either way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { registerProcess, unregisterProcess } from '../../test/support/processRegistry.js';
import { sharedNow } from '../scenarios/clock.js';
import type { FromWorker, ToWorker, WorkerConfig, WorkerReport } from './protocol.js';

/** Pings per child to find its time base: the quickest round trips bound it tightest. */
export const TIME_BASE_PINGS = 20;

export interface TimeBase {
  /** The child's readings minus ours for the same moment. */
  readonly offsetMs: number;
  /** How far the true offset may be from offsetMs. */
  readonly uncertaintyMs: number;
}

/** One ping of a child: our clock when it went and came back, the child's in between. */
export interface Ping {
  readonly sentAt: number;
  readonly workerNow: number;
  readonly receivedAt: number;
}

/** A child's time base from its pings (see WorkerChild.timeBase). */
export function timeBaseOf(pings: readonly Ping[]): TimeBase {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  for (const { sentAt, workerNow, receivedAt } of pings) {
    lo = Math.max(lo, workerNow - receivedAt);
    hi = Math.min(hi, workerNow - sentAt);
  }
  const offsetMs = lo <= 0 && hi >= 0 ? 0 : (lo + hi) / 2;
  return { offsetMs, uncertaintyMs: Math.abs(hi - lo) / 2 };
}

export class WorkerChild {
  private readonly child: ChildProcess;
  private stderr = '';
  private readonly exited: Promise<void>;
  private sectionsSoFar = 0;

  constructor(
    script: string,
    readonly name: string,
  ) {
    // The label tells this run's workers apart in `ps` (the smoke test looks for leftovers by it).
    this.child = spawn(process.execPath, [script, `--bench-pid=${process.pid}`], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    const pid = this.child.pid;
    if (pid !== undefined) registerProcess({ pid });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4096);
    });
    this.child.on('message', (message: FromWorker) => {
      if (message.type === 'progress') this.sectionsSoFar = message.sections;
    });
    // A failed spawn reports here; next() turns the exit into a rejection.
    this.child.on('error', (error) => {
      this.stderr += `\n${error.message}`;
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', () => {
        if (pid !== undefined) unregisterProcess(pid);
        resolve();
      });
    });
  }

  /** Critical sections the child had done at its last progress message. */
  get sections(): number {
    return this.sectionsSoFar;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Connects, warms up; resolves when the child is ready for go. */
  async start(config: WorkerConfig): Promise<void> {
    const ready = this.next('ready');
    this.send({ type: 'start', config });
    await ready;
  }

  /** Runs the shared warm-up (ToWorker 'warm'); resolves when the child is done with it. */
  async warm(): Promise<void> {
    const warmed = this.next('warmed');
    this.send({ type: 'warm' });
    await warmed;
  }

  /**
   * Where this child's time base is relative to ours. Node reads the wall
   * clock for performance.timeOrigin and the monotonic clock it counts from
   * at slightly different moments of start-up, so bases of different
   * processes differ by that gap: up to a millisecond on a busy machine, as
   * long as a hold (seen: 80-98 ms), though mostly it is a few µs. Each ping
   * bounds the offset to [child's reading - reply received, child's reading -
   * ping sent]; the bounds of all pings are intersected. When 0 is within
   * them the offset is taken as 0 (the usual case, exactly right then);
   * otherwise as the middle of the bounds.
   */
  async timeBase(): Promise<TimeBase> {
    const pings: Ping[] = [];
    for (let ping = 0; ping < TIME_BASE_PINGS; ping++) {
      const sentAt = sharedNow();
      const pong = this.next('pong');
      this.send({ type: 'ping', sentAt });
      const { workerNow } = await pong;
      pings.push({ sentAt, workerNow, receivedAt: sharedNow() });
    }
    return timeBaseOf(pings);
  }

  /** The child's report, once it sends one (after go, or after stop). */
  report(): Promise<WorkerReport> {
    return this.next('report').then((message) => message.report);
  }

  go(): void {
    this.send({ type: 'go' });
  }

  stop(): void {
    this.send({ type: 'stop' });
  }

  /** Resolves when the child has exited, or after `limitMs` (then it may still run). */
  async exit(limitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, limitMs)))]);
    clearTimeout(timer);
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  private send(message: ToWorker): void {
    if (this.alive && this.child.connected) this.child.send(message);
  }

  /** The next message of `type`; rejects if the child exits first. */
  private next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: FromWorker): void => {
        if (message.type !== type) return;
        cleanup();
        resolve(message as Extract<FromWorker, { type: T }>);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        cleanup();
        reject(new Error(`${this.name} exited (${code ?? signal}) before sending '${type}'${this.stderr === '' ? '' : `:\n${this.stderr.trim()}`}`));
      };
      const cleanup = (): void => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
      };
      if (!this.alive) {
        onExit(this.child.exitCode, this.child.signalCode);
        return;
      }
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
    });
  }
}
