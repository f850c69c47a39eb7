/**
 * Safety net for child processes started by the test harness.
 *
 * Every redis-server the harness starts is registered here. If the test
 * process exits (normally, via process.exit, or on SIGINT/SIGTERM/SIGHUP)
 * while some are still registered, they are SIGKILLed synchronously and
 * their temp dirs removed, so a failing or aborted test never leaves a
 * redis-server behind. (On Linux the servers are additionally spawned with a
 * parent-death signal where `setpriv` is available; see RedisServer.ts.)
 */
import { rmSync } from 'node:fs';

export interface RegisteredProcess {
  readonly pid: number;
  /** Directory to remove on emergency cleanup, if any. */
  readonly dir?: string | undefined;
}

const live = new Map<number, RegisteredProcess>();
let hooked = false;

function killAllSync(): void {
  for (const entry of live.values()) {
    try {
      process.kill(entry.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    if (entry.dir !== undefined) {
      try {
        rmSync(entry.dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAllSync();
  // Our handler was registered with `once`, so it is gone now. Re-raise only
  // when nobody else handles the signal, to keep the default behaviour (exit).
  if (process.listenerCount(signal) === 0) {
    process.kill(process.pid, signal);
  }
}

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, onSignal);
  }
}

export function registerProcess(entry: RegisteredProcess): void {
  installHooks();
  live.set(entry.pid, entry);
}

export function unregisterProcess(pid: number): void {
  live.delete(pid);
}

/** Pids of harness processes that have not been stopped yet. */
export function livePids(): number[] {
  return [...live.keys()];
}

/** True when a process with this pid exists (signal 0 probe). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
