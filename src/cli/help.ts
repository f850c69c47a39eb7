import { ENV } from './exec.js';
import { EXIT_STATUS_HELP, ExitCode } from './exitCodes.js';

export const EXEC_HELP = `
The command's environment:
  ${ENV.RESOURCE}       RESOURCE
  ${ENV.LOCK_VALUE}     the lock's random value (for quorumlock release --value)
  ${ENV.VALIDITY_MS}    ms of validity left when the command started
  ${ENV.FENCING_TOKEN}  the fencing token (only with --fencing)

Examples:
  quorumlock exec --redis redis://10.0.0.1:6379 nightly-report -- ./report.sh
  quorumlock exec --redis redis://a:6379 --redis redis://b:6379 --redis redis://c:6379 \\
      --ttl 1m --wait forever --fencing migrate -- ./migrate.sh --apply
${EXIT_STATUS_HELP}`;

export const STATUS_HELP = `
Exit status:
  ${ExitCode.OK}   a quorum of nodes answered (whether or not the lock is held: see the output)
  ${ExitCode.USAGE}  usage error: a bad argument, option or environment variable
  ${ExitCode.UNAVAILABLE}  fewer than a quorum of nodes answered
  ${ExitCode.INTERNAL}  internal error`;

export const RELEASE_HELP = `
Exit status:
  ${ExitCode.OK}   every node answered (even if none held VALUE any more)
  ${ExitCode.USAGE}  usage error: a bad argument, option or environment variable
  ${ExitCode.UNAVAILABLE}  some node could not be asked; the lock stays there until its TTL
  ${ExitCode.INTERNAL}  internal error`;
