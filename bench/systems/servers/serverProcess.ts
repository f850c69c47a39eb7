/**
 * One server process of `npm run bench:systems` (an etcd member, a ZooKeeper
 * server, Postgres): spawned with a parent-death SIGKILL (setpriv, where the
 * system has it) and registered with the test harness's process registry, so
 * that neither a failing run nor Ctrl-C leaves it behind. Its output goes to
 * a log file in its own folder, read back when it fails to start.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerProcess, unregisterProcess } from '../../../test/support/processRegistry.js';

const hasSetpriv = spawnSync('setpriv', ['--help'], { stdio: 'ignore' }).status === 0;

export interface SpawnOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Its folder: the log file goes there. */
  readonly dir: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user (Postgres refuses to run as root). */
  readonly user?: string;
}

export class ServerProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  #alive = true;

  private constructor(
    readonly name: string,
    child: ChildProcess,
    readonly logFile: string,
  ) {
    this.#child = child;
    this.#exited = new Promise((resolve) =>
      child.once('exit', () => {
        this.#alive = false;
        if (child.pid !== undefined) unregisterProcess(child.pid);
        resolve();
      }),
    );
  }

  static spawn(options: SpawnOptions): ServerProcess {
    const logFile = join(options.dir, `${options.name}.log`);
    const log = openSync(logFile, 'a');
    const user = options.user === undefined ? [] : ['--reuid', options.user, '--regid', options.user, '--init-groups'];
    const [command, args] = hasSetpriv
      ? ['setpriv', [...user, '--pdeathsig', 'SIGKILL', '--', options.command, ...options.args]]
      : [options.command, [...options.args]];
    if (!hasSetpriv && options.user !== undefined) throw new Error(`${options.name}: running as ${options.user} needs setpriv (util-linux)`);
    const child = spawn(command, args, { stdio: ['ignore', log, log], env: options.env ?? process.env });
    if (child.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
    // Killed (and its folder removed) by the registry if this process dies or is interrupted first.
    registerProcess({ pid: child.pid, dir: options.dir });
    return new ServerProcess(options.name, child, logFile);
  }

  get pid(): number {
    return this.#child.pid!;
  }

  get alive(): boolean {
    return this.#alive;
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8').slice(-4000);
    } catch {
      return '';
    }
  }

  /** Waits until `ready()` says yes, or fails with the log when the process dies or `timeoutMs` passes. */
  async waitUntil(what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.#alive) throw new Error(`${this.name} exited before ${what}:\n${this.log()}`);
      if (await ready().catch(() => false)) return;
      await sleep(100);
    }
    throw new Error(`${this.name}: no ${what} within ${timeoutMs} ms:\n${this.log()}`);
  }

  /** kill -9, and wait until it is gone. */
  async kill(): Promise<void> {
    if (!this.#alive) return;
    this.#child.kill('SIGKILL');
    await this.#exited;
  }

  /** A clean stop with `signal`, then SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5_000): Promise<void> {
    if (!this.#alive) return;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }
}

/**
 * Memory of `pid` and its descendants (Postgres forks a backend per
 * connection), in bytes: each one's proportional set size, so pages that
 * processes share (Postgres's shared buffers) count once in all, not once per
 * process as resident sizes would. 0 if gone.
 */
export function treeMemoryBytes(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const rollup = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
      const kb = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
      if (kb !== undefined) total += Number(kb) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

/** How many processes `pid` and its descendants are. */
export function treeSize(pid: number): number {
  return 1 + descendants(pid).length;
}

export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift()!;
    let children: string;
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const c of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
