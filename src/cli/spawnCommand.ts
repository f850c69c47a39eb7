import { type ChildProcess, spawn } from 'node:child_process';
import { isatty } from 'node:tty';

export interface CommandSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

export interface RunningCommand {
  readonly child: ChildProcess;
  /** Whether the command leads its own process group, which signals reach as a whole. */
  readonly ownGroup: boolean;
  /** Signals the command (its whole process group when it has one); never throws. */
  signal(signal: NodeJS.Signals): void;
}

/**
 * Starts the command with our stdio. Unless stdin is a terminal (cron,
 * systemd, CI, pipes) it gets its own process group, so a signal reaches
 * everything it started: `sh -c 'a; b'` must not leave `a` running without
 * the lock after sh was killed. On a terminal it stays in our group, so it
 * can still read from the terminal; the terminal's Ctrl-C reaches it there.
 */
export function spawnCommand(spec: CommandSpec): RunningCommand {
  const ownGroup = !isatty(0);
  const child = spawn(spec.command, [...spec.args], { stdio: 'inherit', env: spec.env, detached: ownGroup });
  return {
    child,
    ownGroup,
    signal(signal: NodeJS.Signals): void {
      if (!ownGroup || child.pid === undefined) {
        child.kill(signal);
        return;
      }
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: every process of the group has exited already.
      }
    },
  };
}
