import { LockReleasedError } from '../shared/errors.js';
import { ExitCode, signalExitStatus } from './exitCodes.js';
import { CliFailure, toFailure } from './failure.js';
import type { SignalRelay } from './SignalRelay.js';
import { type CommandSpec, spawnCommand } from './spawnCommand.js';

export type OnLost = 'term' | 'kill';

export interface LostPolicy {
  readonly onLost: OnLost;
  /** After SIGTERM, how long the command has before SIGKILL. */
  readonly graceMs: number;
}

/**
 * Runs the command while `lockSignal` stays quiet and resolves to its exit
 * status. If the lock is lost first, the command is signalled (SIGTERM, then
 * SIGKILL after the grace; or SIGKILL at once) and, once it has exited, the
 * promise rejects with a `lost` failure: the command's status no longer says
 * whether its work was protected. Whatever is left of the command's process
 * group then is killed too: nothing it started may go on without the lock.
 */
export function runCommand(spec: CommandSpec, lockSignal: AbortSignal, policy: LostPolicy, relay: SignalRelay): Promise<number> {
  if (lockSignal.aborted && !(lockSignal.reason instanceof LockReleasedError)) {
    return Promise.reject(lostFailure(lockSignal.reason, 'before the command started'));
  }
  return new Promise<number>((resolve, reject) => {
    const command = spawnCommand(spec);
    const { child } = command;
    relay.attach(command);
    let lost: unknown;
    const sent: NodeJS.Signals[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const send = (signal: NodeJS.Signals): void => {
      sent.push(signal);
      command.signal(signal);
    };
    const onLost = (): void => {
      if (lockSignal.reason instanceof LockReleasedError) return;
      lost = lockSignal.reason;
      if (policy.onLost === 'kill') {
        send('SIGKILL');
        return;
      }
      send('SIGTERM');
      killTimer = setTimeout(() => send('SIGKILL'), policy.graceMs);
    };

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(killTimer);
      lockSignal.removeEventListener('abort', onLost);
      relay.detach();
      outcome();
    };

    child.once('error', (error: NodeJS.ErrnoException) => {
      settle(() => reject(spawnFailure(spec.command, error)));
    });
    child.once('exit', (code, signal) => {
      const status = code ?? (signal ? signalExitStatus(signal) : ExitCode.INTERNAL);
      settle(() => {
        if (lost === undefined) {
          resolve(status);
          return;
        }
        if (command.ownGroup) command.signal('SIGKILL');
        reject(lostFailure(lost, `while the command ran; sent it ${sent.join(', then ')}; it exited with status ${status}`));
      });
    });
    lockSignal.addEventListener('abort', onLost, { once: true });
  });
}

function lostFailure(reason: unknown, when: string): CliFailure {
  const failure = toFailure(reason);
  return new CliFailure('lost', ExitCode.LOST, `${failure.message} ${when}`, failure.details);
}

function spawnFailure(command: string, error: NodeJS.ErrnoException): CliFailure {
  if (error.code === 'ENOENT') {
    return new CliFailure('not-found', ExitCode.NOT_FOUND, `command not found: ${command}`);
  }
  return new CliFailure('cannot-execute', ExitCode.CANNOT_EXECUTE, `cannot run ${command}: ${error.message}`);
}
