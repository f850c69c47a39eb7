import { type CliFailure, usageFailure } from './failure.js';

export const EXEC_GRAMMAR = 'quorumlock exec [options] RESOURCE -- COMMAND [ARGS...]';

/**
 * The command to run, from what commander took for RESOURCE and COMMAND.
 * The command must follow a `--`, so that its own options are never taken
 * for ours (`exec job -- rsync --timeout 5` passes --timeout to rsync). A
 * RESOURCE that starts with `-` would be taken for an option, so it may come
 * after a `--` of its own: `exec -- -job -- COMMAND`. Commander drops only
 * the first `--`, so that form reaches us as COMMAND = ['--', ...].
 */
export function commandToRun(argv: readonly string[], resource: string, operands: readonly string[]): string[] {
  const separator = argv.indexOf('--');
  const afterSeparator = separator === -1 ? [] : argv.slice(separator + 1);
  if (sameWords(afterSeparator, operands)) return [...operands];
  if (sameWords(afterSeparator, [resource, ...operands]) && operands[0] === '--') {
    const command = operands.slice(1);
    if (command.length > 0) return command;
    throw usage(`no command after the -- that follows RESOURCE: ${EXEC_GRAMMAR}`);
  }
  throw usage(`put -- between RESOURCE and the command: ${EXEC_GRAMMAR}`);
}

function usage(problem: string): CliFailure {
  return usageFailure('COMMAND', problem);
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}
