import { ErrorCode, isQuorumLockError } from '../shared/errors.js';
import type { NodeOutcome } from '../shared/outcome.js';
import { ExitCode } from './exitCodes.js';

/** What went wrong, in words a script can branch on (the `outcome` field of --json). */
export type FailureKind =
  | 'usage'
  | 'busy'
  | 'unavailable'
  | 'lost'
  | 'interrupted'
  | 'cannot-execute'
  | 'not-found'
  | 'internal';

export interface FailureDetails {
  /** The bad argument, option or environment variable (usage errors). */
  readonly argument?: string;
  /** The library's error code, when the library reported the failure. */
  readonly code?: string;
  /** What each Redis node answered. */
  readonly nodes?: readonly NodeOutcome[];
}

/** A failure of quorumlock itself, with the exit status it ends the process with. */
export class CliFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly exitCode: number,
    message: string,
    readonly details: FailureDetails = {},
  ) {
    super(message);
    this.name = 'CliFailure';
  }
}

/** A bad argument; the message names it as the library's InvalidArgumentError does. */
export function usageFailure(argument: string, problem: string): CliFailure {
  return new CliFailure('usage', ExitCode.USAGE, `Invalid ${argument}: ${problem}`, { argument });
}

/** Maps any error (ours, the library's, or a bug) to a failure and its exit status. */
export function toFailure(error: unknown): CliFailure {
  if (error instanceof CliFailure) return error;
  if (!isQuorumLockError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new CliFailure('internal', ExitCode.INTERNAL, `internal error: ${message}`);
  }
  const nodes = 'outcomes' in error ? (error.outcomes as readonly NodeOutcome[]) : undefined;
  const details: FailureDetails = nodes ? { code: error.code, nodes } : { code: error.code };
  switch (error.code) {
    case ErrorCode.INVALID_ARGUMENT: {
      const argument = (error as { argument?: string }).argument;
      return new CliFailure('usage', ExitCode.USAGE, error.message, argument ? { ...details, argument } : details);
    }
    case ErrorCode.LOCK_HELD:
    // A quorum agreed but too slowly: contention for the machine, worth a retry.
    case ErrorCode.VALIDITY_EXHAUSTED:
      return new CliFailure('busy', ExitCode.BUSY, error.message, details);
    case ErrorCode.QUORUM_UNREACHABLE:
      return new CliFailure('unavailable', ExitCode.UNAVAILABLE, error.message, details);
    case ErrorCode.LOCK_LOST:
    case ErrorCode.LOCK_EXPIRED:
      return new CliFailure('lost', ExitCode.LOST, error.message, details);
    default:
      return new CliFailure('internal', ExitCode.INTERNAL, `internal error: ${error.message}`, details);
  }
}
