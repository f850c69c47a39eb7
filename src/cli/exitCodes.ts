import { constants } from 'node:os';

/**
 * quorumlock's own exit statuses. Apart from these, `exec` exits with its
 * command's status (128 + the signal number when the command died by a
 * signal), so shell scripts can branch on both.
 *
 * The values come from sysexits.h where one fits, and stay clear of the
 * statuses commands commonly use for themselves (1, 2, 126, 127, 128 + n).
 */
export const ExitCode = Object.freeze({
  /** Success (status, release; exec when the command exited 0). */
  OK: 0,
  /** EX_USAGE: a bad argument, option or environment variable. */
  USAGE: 64,
  /** EX_UNAVAILABLE: not enough Redis nodes answered. */
  UNAVAILABLE: 69,
  /** EX_SOFTWARE: an unexpected internal error (a bug: please report it). */
  INTERNAL: 70,
  /** EX_TEMPFAIL: the lock is held elsewhere (still, after --wait); try later. */
  BUSY: 75,
  /** The lock was lost while the command ran; the command was signalled. */
  LOST: 79,
  /** The command was found but could not be run (as in sh). */
  CANNOT_EXECUTE: 126,
  /** The command was not found (as in sh). */
  NOT_FOUND: 127,
} as const);

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

const signalNumbers: Partial<Record<string, number>> = constants.signals;

/** The shell's status for a process that died by `signal`: 128 + its number. */
export function signalExitStatus(signal: NodeJS.Signals): number {
  return 128 + (signalNumbers[signal] ?? 0);
}

/** The table printed by `--help` (docs/cli.md has the same). */
export const EXIT_STATUS_HELP = `
Exit status:
  0      success (exec: the command exited 0)
  64     usage error: a bad argument, option or environment variable
  69     unavailable: not enough Redis nodes answered
  70     internal error
  75     busy: the lock is held elsewhere (still, after --wait)
  79     exec: the lock was lost while the command ran; the command was signalled
  126    exec: the command could not be run
  127    exec: the command was not found
  128+N  exec: the command, or quorumlock while waiting, was killed by signal N
  other  exec: the command's own exit status`;
