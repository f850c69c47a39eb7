/**
 * One real redis-server process on a loopback port, for integration tests.
 *
 *   const server = new RedisServer({ persistence: 'appendfsync-always' });
 *   await server.start();           // waits until it answers PING
 *   server.url                      // redis://127.0.0.1:<port>
 *   await server.kill();            // SIGKILL (crash)
 *   await server.restart();         // same port, AOF replayed
 *   await server.restart({ empty: true }); // same port, data files deleted
 *   await server.pause(); await server.resume(); // SIGSTOP / SIGCONT
 *   await server.stop();            // SIGTERM (SIGKILL after a grace), temp dir removed
 *
 *   new RedisServer({ replicaOf: { host, port } })   // starts as a replica
 *   new RedisServer({ sentinel: { name, host, port, quorum, downAfterMs, failoverTimeoutMs } }) // a sentinel
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, releasePort } from './freePort.js';
import { registerProcess, unregisterProcess } from './processRegistry.js';

export type Persistence = 'none' | 'appendfsync-always';

export interface RedisServerOptions {
  /** 'none' (default): `--save '' --appendonly no`. 'appendfsync-always': AOF fsynced on every write. */
  readonly persistence?: Persistence;
  /** Fixed port; default: a free loopback port chosen at start. */
  readonly port?: number;
  /** Binary to run; default env QUORUMLOCK_REDIS_SERVER or `redis-server` on PATH. */
  readonly redisServerPath?: string;
  /** How many readiness probes before giving up (default 250). */
  readonly readyTries?: number;
  /** Pause between readiness probes in ms (default 20). */
  readonly readyIntervalMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL, in ms (default 5000). */
  readonly stopGraceMs?: number;
  /** Extra command-line arguments, appended last. */
  readonly extraArgs?: readonly string[];
  /** Start as a replica of this address (REPLICAOF); restart() can change it. */
  readonly replicaOf?: Address;
  /** Run as a Sentinel (`redis-server sentinel.conf --sentinel`) monitoring this master instead of as a server. */
  readonly sentinel?: SentinelMonitor;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

/** What a sentinel watches, and how quickly it gives a master up. */
export interface SentinelMonitor extends Address {
  /** The master's name, as clients ask for it (`name` in ioredis's sentinel options). */
  readonly name: string;
  /** Sentinels that must agree the master is down. */
  readonly quorum: number;
  readonly downAfterMs: number;
  readonly failoverTimeoutMs: number;
}

export interface RestartOptions {
  /** Delete the AOF/RDB files before starting again (default false: the AOF is replayed). */
  readonly empty?: boolean;
  /** Stop with SIGTERM (clean shutdown) instead of SIGKILL (crash, the default). */
  readonly graceful?: boolean;
  /** Come back as a replica of this address (from now on), as a failed-over master rejoins the new one. */
  readonly replicaOf?: Address;
}

const HOST = '127.0.0.1';
const LOG_TAIL_CHARS = 8192;
const MAX_PORT_ATTEMPTS = 8;

type Probe = 'ready' | 'not-ready' | 'foreign';

export class RedisServer {
  readonly host = HOST;
  readonly persistence: Persistence;

  private readonly options: RedisServerOptions;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private alive = false;
  private paused = false;
  private currentPort: number | undefined;
  private dataDir: string | undefined;
  private log = '';
  private lastExit: string | undefined;
  private replicaOf: Address | undefined;

  constructor(options: RedisServerOptions = {}) {
    this.options = options;
    this.persistence = options.persistence ?? 'none';
    this.replicaOf = options.replicaOf;
  }

  /** The port, known once start() has succeeded (kept across restarts). */
  get port(): number {
    if (this.currentPort === undefined) throw new Error('RedisServer: not started yet');
    return this.currentPort;
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  /** Pid of the running process, undefined when it is not running. */
  get pid(): number | undefined {
    return this.alive ? this.child?.pid : undefined;
  }

  get isRunning(): boolean {
    return this.alive;
  }

  get isPaused(): boolean {
    return this.alive && this.paused;
  }

  /** Working directory (AOF/RDB files), undefined after the final stop(). */
  get dir(): string | undefined {
    return this.dataDir;
  }

  /** Last lines the server printed (its log goes to stdout). */
  logTail(): string {
    return this.log;
  }

  async start(): Promise<void> {
    if (this.alive) return;
    await this.startOn(this.options.port);
  }

  /** SIGTERM, wait for exit (SIGKILL after the grace), then remove the temp dir. */
  async stop(): Promise<void> {
    await this.terminate('SIGTERM');
    if (this.currentPort !== undefined && this.options.port === undefined) releasePort(this.currentPort);
    if (this.dataDir !== undefined) {
      await rm(this.dataDir, { recursive: true, force: true });
      this.dataDir = undefined;
    }
  }

  /** SIGKILL and wait for exit. The data dir stays, so restart() can replay the AOF. */
  async kill(): Promise<void> {
    await this.terminate('SIGKILL');
  }

  /** SIGSTOP: the process keeps its sockets but answers nothing until resume(). */
  async pause(): Promise<void> {
    const child = this.requireRunning('pause');
    child.kill('SIGSTOP');
    this.paused = true;
    await waitForProcState(child.pid, (s) => s === 'T' || s === 't');
  }

  /** SIGCONT after pause(). */
  async resume(): Promise<void> {
    const child = this.requireRunning('resume');
    child.kill('SIGCONT');
    this.paused = false;
    await waitForProcState(child.pid, (s) => s !== 'T' && s !== 't');
  }

  /**
   * Stop (SIGKILL by default, SIGTERM with `graceful`) and start again on the
   * same port. With `empty` the data files are deleted first; otherwise, with
   * persistence 'appendfsync-always', the AOF is replayed. (With persistence
   * 'none' nothing survives either way.)
   */
  async restart(options: RestartOptions = {}): Promise<void> {
    const port = this.port;
    await this.terminate(options.graceful === true ? 'SIGTERM' : 'SIGKILL');
    if (options.replicaOf !== undefined) this.replicaOf = options.replicaOf;
    if (options.empty === true && this.dataDir !== undefined) {
      await rm(this.dataDir, { recursive: true, force: true });
      await mkdir(this.dataDir, { recursive: true });
    }
    await this.startOn(port);
  }

  // ---------------------------------------------------------------------------

  private requireRunning(what: string): ChildProcess {
    if (!this.alive || this.child === undefined) {
      throw new Error(`RedisServer.${what}: server is not running`);
    }
    return this.child;
  }

  private async startOn(fixedPort: number | undefined): Promise<void> {
    this.dataDir ??= await mkdtemp(join(tmpdir(), 'quorumlock-redis-'));
    for (let attempt = 1; ; attempt++) {
      const port = fixedPort ?? (await freePort(HOST));
      const outcome = await this.launch(port);
      if (outcome === 'ready') {
        this.currentPort = port;
        return;
      }
      if (fixedPort === undefined) releasePort(port);
      if (attempt >= MAX_PORT_ATTEMPTS) {
        throw new Error(
          `redis-server could not bind ${HOST}:${port} after ${attempt} attempts (address in use)\n${this.log}`,
        );
      }
      // A fixed port may still be held for a moment (e.g. by a dying process).
      if (fixedPort !== undefined) await sleep(50 * attempt);
    }
  }

  private args(port: number, dir: string): string[] {
    if (this.options.sentinel !== undefined) return this.sentinelArgs(port, dir, this.options.sentinel);
    const replication = this.replicaOf === undefined ? [] : ['--replicaof', this.replicaOf.host, String(this.replicaOf.port)];
    const persistence =
      this.persistence === 'none'
        ? ['--save', '', '--appendonly', 'no']
        : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    return [...this.commonArgs(port, dir), '--dbfilename', 'dump.rdb', ...persistence, ...replication, ...(this.options.extraArgs ?? [])];
  }

  /** What a server and a sentinel are both told: where to listen and work, in the foreground, logging to stdout. */
  private commonArgs(port: number, dir: string): string[] {
    return [
      '--port', String(port),
      '--bind', HOST,
      '--protected-mode', 'no',
      '--daemonize', 'no',
      '--dir', dir,
      '--logfile', '',
    ];
  }

  /**
   * A sentinel rewrites its configuration file as it learns the group, so
   * the file is written once, before its first start, and never again.
   */
  private sentinelArgs(port: number, dir: string, monitor: SentinelMonitor): string[] {
    const config = join(dir, 'sentinel.conf');
    if (!existsSync(config)) {
      writeFileSync(
        config,
        [
          `sentinel monitor ${monitor.name} ${monitor.host} ${monitor.port} ${monitor.quorum}`,
          `sentinel down-after-milliseconds ${monitor.name} ${monitor.downAfterMs}`,
          `sentinel failover-timeout ${monitor.name} ${monitor.failoverTimeoutMs}`,
          `sentinel parallel-syncs ${monitor.name} 1`,
          '',
        ].join('\n'),
      );
    }
    return [config, '--sentinel', ...this.commonArgs(port, dir), ...(this.options.extraArgs ?? [])];
  }

  /** Spawn on `port` and wait until it answers. 'addrinuse' means: try another port. */
  private async launch(port: number): Promise<'ready' | 'addrinuse'> {
    const dir = this.dataDir;
    if (dir === undefined) throw new Error('RedisServer: no data dir');
    const binary = this.options.redisServerPath ?? process.env['QUORUMLOCK_REDIS_SERVER'] ?? 'redis-server';
    const [command, argv] = withParentDeathSignal(binary, this.args(port, dir));

    this.log = '';
    this.lastExit = undefined;
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const append = (chunk: Buffer): void => {
      this.log = (this.log + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);

    let gone = false;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        gone = true;
        this.lastExit = signal !== null ? `signal ${signal}` : `code ${String(code)}`;
        if (this.child === child) this.alive = false;
        if (child.pid !== undefined) unregisterProcess(child.pid);
        resolve();
      });
      child.once('error', (err) => {
        // Only a failure to spawn ends the process here; a failed kill() also emits 'error'.
        if (child.pid !== undefined) return;
        gone = true;
        this.lastExit = `spawn error: ${err.message}`;
        if (this.child === child) this.alive = false;
        resolve();
      });
    });
    this.child = child;
    this.paused = false;
    this.alive = child.pid !== undefined;
    if (child.pid !== undefined) registerProcess({ pid: child.pid, dir });

    const tries = this.options.readyTries ?? 250;
    const interval = this.options.readyIntervalMs ?? 20;
    for (let i = 0; i < tries && !gone; i++) {
      const probe = await probeServer(port, child.pid);
      if (probe === 'ready' && !gone) return 'ready';
      await Promise.race([sleep(interval), this.exited]);
    }

    if (gone) {
      if (this.log.includes('Address already in use')) return 'addrinuse';
      throw new Error(
        `redis-server on ${HOST}:${port} exited during start (${this.lastExit ?? 'unknown'}). Log tail:\n${this.log}`,
      );
    }
    const tail = this.log;
    await this.terminate('SIGKILL');
    throw new Error(`redis-server on ${HOST}:${port} did not answer PING after ${tries} tries. Log tail:\n${tail}`);
  }

  private async terminate(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!this.alive || child === undefined) return;
    if (signal === 'SIGTERM') {
      if (this.paused) child.kill('SIGCONT');
      child.kill('SIGTERM');
      const grace = this.options.stopGraceMs ?? 5000;
      const ac = new AbortController();
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        sleep(grace, true, { signal: ac.signal }).catch(() => false),
      ]);
      ac.abort();
      if (timedOut) child.kill('SIGKILL');
    } else {
      child.kill('SIGKILL');
    }
    await this.exited;
    this.paused = false;
  }
}

/**
 * One connection: PING, then INFO server to check that the answering server is
 * ours (a racing process may have taken the port we picked).
 */
function probeServer(port: number, expectedPid: number | undefined, timeoutMs = 500): Promise<Probe> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    let buffer = '';
    let settled = false;
    const done = (result: Probe): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done('not-ready'), timeoutMs);
    socket.on('connect', () => socket.write('PING\r\nINFO server\r\n'));
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      const eol = buffer.indexOf('\r\n');
      if (eol < 0) return;
      if (buffer.slice(0, eol) !== '+PONG') {
        done('not-ready'); // e.g. -LOADING while the AOF is replayed
        return;
      }
      const match = /process_id:(\d+)\r\n/.exec(buffer);
      if (match?.[1] === undefined) return;
      done(expectedPid === undefined || Number(match[1]) === expectedPid ? 'ready' : 'foreign');
    });
    socket.on('error', () => done('not-ready'));
    socket.on('close', () => done('not-ready'));
  });
}

let setprivSupported: boolean | undefined;

/**
 * On Linux, run the server under `setpriv --pdeathsig KILL` so it dies with
 * the test process even if that one is SIGKILLed (the exit hook cannot run
 * then). setpriv execs, so the pid is redis-server's own.
 */
function withParentDeathSignal(binary: string, args: string[]): [string, string[]] {
  if (process.platform !== 'linux' || process.env['QUORUMLOCK_NO_PDEATHSIG'] !== undefined) {
    return [binary, args];
  }
  if (setprivSupported === undefined) {
    try {
      setprivSupported = execFileSync('setpriv', ['--help'], { encoding: 'utf8', timeout: 5000 }).includes('--pdeathsig');
    } catch {
      setprivSupported = false;
    }
  }
  return setprivSupported ? ['setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args]] : [binary, args];
}

/** Poll /proc/<pid>/stat until the state letter satisfies `ok` (bounded; no-op without /proc). */
async function waitForProcState(pid: number | undefined, ok: (state: string) => boolean): Promise<void> {
  if (pid === undefined) return;
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return;
  for (let i = 0; i < 200; i++) {
    let state: string | undefined;
    try {
      const stat = readFileSync(file, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
    } catch {
      return; // process gone
    }
    if (ok(state)) return;
    await sleep(5);
  }
}
