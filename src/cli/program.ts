import { Command, CommanderError, Option } from 'commander';
import { parseWait } from './duration.js';
import { ENV, enclosingLock, exec } from './exec.js';
import { commandToRun } from './execOperands.js';
import { EXIT_STATUS_HELP, ExitCode } from './exitCodes.js';
import { CliFailure, toFailure } from './failure.js';
import { DASHED_RESOURCE_USAGE, EXEC_HELP, RELEASE_HELP, STATUS_HELP } from './help.js';
import {
  addNodeOptions,
  addQueryOptions,
  checkResource,
  checkValue,
  type CommonFlags,
  commanderParser,
  durationOption,
  nodesFrom,
  parseLimit,
  parseReplicaCount,
  reportErrorsOurselves,
} from './options.js';
import { release } from './release.js';
import { Reporter } from './Reporter.js';
import type { LockMode } from './locker.js';
import type { OnLost } from './runCommand.js';
import { status } from './status.js';
import { packageVersion } from './version.js';

interface ExecFlags extends CommonFlags {
  readonly ttl: number;
  readonly wait: number;
  readonly fencing?: boolean;
  readonly syncReplicas?: number;
  readonly limit?: number;
  readonly shared?: boolean;
  readonly exclusive?: boolean;
  readonly onLost: OnLost;
  readonly grace: number;
  readonly nodeTimeout: number;
  readonly connectTimeout: number;
  readonly quiet?: boolean;
}

interface QueryFlags extends CommonFlags {
  readonly timeout: number;
}

interface ReleaseFlags extends QueryFlags {
  readonly value: string;
}

const COMMANDS = ['exec', 'status', 'release'];

/**
 * Runs the quorumlock command line on `argv` (without node and the script)
 * and resolves to the exit status. Never rejects and never calls
 * process.exit(): the caller sets process.exitCode and the process ends once
 * every connection is closed.
 */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode: number = ExitCode.OK;
  const program = buildProgram(argv, env, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (!(error instanceof CommanderError)) {
      const failure = toFailure(error);
      new Reporter(commandIn(argv), { json: wantsJson(argv) }).failure(failure);
      return failure.exitCode;
    }
    // --help exits 0; every parse error is a usage error.
    if (error.exitCode === 0) return ExitCode.OK;
    // No command given: commander has printed the help on stderr.
    if (error.code === 'commander.help') return ExitCode.USAGE;
    const message = error.message.replace(/^error: /, '');
    const command = commandIn(argv);
    // The unknown option may be a resource that starts with '-'.
    const dashed = error.code === 'commander.unknownOption' ? DASHED_RESOURCE_USAGE[command] : undefined;
    const hint = dashed ? `A RESOURCE that starts with '-' goes after '--': ${dashed}\n${usageHint(command)}` : usageHint(command);
    new Reporter(command, { json: wantsJson(argv) }).failure(new CliFailure('usage', ExitCode.USAGE, message), hint);
    return ExitCode.USAGE;
  }
}

function buildProgram(argv: readonly string[], env: NodeJS.ProcessEnv, setExitCode: (code: number) => void): Command {
  const program = new Command('quorumlock')
    .description('Run commands under a Redis lock (one node) or a Redlock quorum (several), and inspect locks.')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .addHelpText('after', EXIT_STATUS_HELP);
  reportErrorsOurselves(program);

  const run = (command: string, flags: { json?: boolean; quiet?: boolean }, action: (reporter: Reporter) => Promise<number>) => {
    const reporter = new Reporter(command, { json: flags.json === true, quiet: flags.quiet === true });
    return action(reporter).then(setExitCode, (error: unknown) => {
      const failure = toFailure(error);
      reporter.failure(failure, failure.kind === 'usage' ? usageHint(command) : undefined);
      setExitCode(failure.exitCode);
    });
  };

  const execCommand = reportErrorsOurselves(program.command('exec'))
    .summary('run a command while holding a lock')
    .description(
      'Acquire the lock on RESOURCE, run COMMAND with the lock held and extended, forward SIGINT, SIGTERM and SIGHUP to it, ' +
        "release the lock when it exits, and exit with the command's status. If the lock is lost while the command runs, " +
        `the command is signalled (--on-lost) and quorumlock exits ${ExitCode.LOST}.`,
    )
    .usage('[options] RESOURCE -- COMMAND [ARGS...]')
    .argument('<resource>', 'the lock name (a Redis key)')
    .argument('<command...>', 'the command and its arguments, after --');
  addNodeOptions(execCommand)
    .addOption(durationOption('--ttl <duration>', 'lock time-to-live; the lock is extended while the command runs', 1).default(30_000, '30s'))
    .addOption(
      new Option('--wait <duration>', 'how long to wait for a held lock: 0 (one attempt), a duration, or forever')
        .argParser(commanderParser(parseWait))
        .default(0, '0'),
    )
    .option('--fencing', `pass a fencing token (strictly increasing per resource) in ${ENV.FENCING_TOKEN}`)
    .addOption(
      new Option(
        '--sync-replicas <count>',
        "count a node's grant only once this many of its replicas have the write (Redis WAIT, within half of --node-timeout)",
      ).argParser(commanderParser(parseReplicaCount)),
    )
    .addOption(
      new Option('--limit <count>', 'a counting semaphore: run while at most this many holders (on any hosts) run RESOURCE')
        .argParser(commanderParser(parseLimit))
        .conflicts(['fencing', 'shared', 'exclusive']),
    )
    .addOption(new Option('--shared', 'a read lock: run beside other --shared holders, never beside an --exclusive one').conflicts(['fencing', 'exclusive']))
    .addOption(new Option('--exclusive', 'a write lock: run alone, before --shared holders that come after it').conflicts(['fencing']))
    .addOption(
      new Option('--on-lost <action>', 'if the lock is lost: term (SIGTERM, then SIGKILL after --grace) or kill (SIGKILL)')
        .choices(['term', 'kill'])
        .default('term'),
    )
    .addOption(durationOption('--grace <duration>', 'time between SIGTERM and SIGKILL when the lock is lost', 0).default(5000, '5s'))
    .addOption(durationOption('--node-timeout <duration>', 'time each node has to answer a lock request', 1).default(50, '50ms'))
    .addOption(durationOption('--connect-timeout <duration>', 'time each node has to accept the connection', 1).default(2000, '2s'))
    .option('--json', "print quorumlock's own failures as one line of JSON on stderr")
    .option('--quiet', `print nothing when the lock is held elsewhere (exit ${ExitCode.BUSY}); every other failure is still printed`)
    .addHelpText('after', EXEC_HELP)
    .action((resource: string, operands: string[], flags: ExecFlags) =>
      run('exec', flags, async () => {
        const [file = '', ...args] = commandToRun(argv, resource, operands);
        return exec({
          resource: checkResource(resource),
          enclosing: enclosingLock(resource, env),
          command: file,
          args,
          nodes: nodesFrom(flags, env),
          ttlMs: flags.ttl,
          waitMs: flags.wait,
          fencing: flags.fencing === true,
          syncReplicas: flags.syncReplicas,
          ...modeOf(flags),
          onLost: flags.onLost,
          graceMs: flags.grace,
          nodeTimeoutMs: flags.nodeTimeout,
          connectTimeoutMs: flags.connectTimeout,
        });
      }),
    );

  const statusCommand = reportErrorsOurselves(program.command('status'))
    .summary('show who holds a lock, per node')
    .description('Show the value and remaining TTL of RESOURCE on every node, and the holder: the value found on a quorum of nodes.')
    .argument('<resource>', 'the lock name (a Redis key)');
  addQueryOptions(addNodeOptions(statusCommand))
    .addHelpText('after', STATUS_HELP)
    .action((resource: string, flags: QueryFlags) =>
      run('status', flags, (reporter) =>
        status({ resource: checkResource(resource), nodes: nodesFrom(flags, env), timeoutMs: flags.timeout }, reporter),
      ),
    );

  const releaseCommand = reportErrorsOurselves(program.command('release'))
    .summary("delete a lock, but only where it still holds the given value")
    .description(
      'Delete RESOURCE on every node where it still holds VALUE (compare-and-delete), for operators clearing ' +
        'a lock whose holder is gone. Another holder\'s lock is never deleted. Find the value with "quorumlock status".',
    )
    .argument('<resource>', 'the lock name (a Redis key)')
    .requiredOption('--value <value>', 'the holder\'s lock value');
  addQueryOptions(addNodeOptions(releaseCommand))
    .addHelpText('after', RELEASE_HELP)
    .action((resource: string, flags: ReleaseFlags) =>
      run('release', flags, (reporter) =>
        release(
          { resource: checkResource(resource), value: checkValue(flags.value), nodes: nodesFrom(flags, env), timeoutMs: flags.timeout },
          reporter,
        ),
      ),
    );

  return program;
}

function modeOf(flags: ExecFlags): { mode?: LockMode } {
  if (flags.limit !== undefined) return { mode: { kind: 'semaphore', limit: flags.limit } };
  if (flags.shared === true) return { mode: { kind: 'shared' } };
  if (flags.exclusive === true) return { mode: { kind: 'exclusive' } };
  return {};
}

/** The subcommand named in argv, or '' when there is none (yet). */
function commandIn(argv: readonly string[]): string {
  const first = argv[0];
  return first !== undefined && COMMANDS.includes(first) ? first : '';
}

function wantsJson(argv: readonly string[]): boolean {
  const separator = argv.indexOf('--');
  return (separator === -1 ? argv : argv.slice(0, separator)).includes('--json');
}

function usageHint(command: string): string {
  return COMMANDS.includes(command) ? `Run 'quorumlock ${command} --help' for usage.` : "Run 'quorumlock --help' for usage.";
}
