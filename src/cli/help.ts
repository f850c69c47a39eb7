import { ENV } from './exec.js';
import { EXIT_STATUS_HELP, ExitCode } from './exitCodes.js';

const DASHED_EXEC = 'quorumlock exec [options] -- -RESOURCE -- COMMAND [ARGS...]';
const DASHED_STATUS = 'quorumlock status [options] -- -RESOURCE';
const DASHED_RELEASE = 'quorumlock release [options] --value VALUE -- -RESOURCE';

/** Commander takes any word that starts with '-' for an option; after '--' it is an operand. */
export const DASHED_RESOURCE_USAGE: Partial<Record<string, string>> = {
  exec: DASHED_EXEC,
  status: DASHED_STATUS,
  release: DASHED_RELEASE,
};

const dashedResource = (usage: string): string => `
A RESOURCE that starts with '-' goes after '--':
  ${usage}
`;

export const EXEC_HELP = `${dashedResource(DASHED_EXEC)}
The command's environment:
  ${ENV.RESOURCE}       RESOURCE
  ${ENV.LOCK_VALUE}     the lock's random value (for quorumlock release --value)
  ${ENV.VALIDITY_MS}    ms of validity left when the command started
  ${ENV.FENCING_TOKEN}  the fencing token (only with --fencing)

Inside a command of 'quorumlock exec RESOURCE' (its environment names RESOURCE
and the lock's value), 'quorumlock exec RESOURCE' re-enters that lock: it
checks the value on a quorum of nodes, runs its command at once, and leaves
the lock to the outer exec at exit. A value that no longer holds RESOURCE
exits ${ExitCode.LOST}.

Examples:
  quorumlock exec --redis redis://10.0.0.1:6379 nightly-report -- ./report.sh
  quorumlock exec --redis redis://a:6379 --redis redis://b:6379 --redis redis://c:6379 \\
      --ttl 1m --wait forever --fencing migrate -- ./migrate.sh --apply
${EXIT_STATUS_HELP}`;

export const STATUS_HELP = `${dashedResource(DASHED_STATUS)}
Exit status:
  ${ExitCode.OK}   a quorum of nodes answered (whether or not the lock is held: see the output)
  ${ExitCode.USAGE}  usage error: a bad argument, option or environment variable
  ${ExitCode.UNAVAILABLE}  fewer than a quorum of nodes answered
  ${ExitCode.INTERNAL}  internal error`;

export const RELEASE_HELP = `${dashedResource(DASHED_RELEASE)}
Exit status:
  ${ExitCode.OK}   every node answered (even if none held VALUE any more)
  ${ExitCode.USAGE}  usage error: a bad argument, option or environment variable
  ${ExitCode.UNAVAILABLE}  some node could not be asked; the lock stays there until its TTL
  ${ExitCode.INTERNAL}  internal error`;
