import { type Command, InvalidArgumentError, Option } from 'commander';
import { normalizeResources } from '../lock/validate.js';
import { MAX_LIMIT } from '../semaphore/options.js';
import { parseDuration } from './duration.js';
import { ExitCode } from './exitCodes.js';
import { CliFailure } from './failure.js';
import { type NodeAddress, resolveNodeAddresses, URLS_ENV } from './nodeUrls.js';

/** Options every command has. */
export interface CommonFlags {
  readonly redis?: string[];
  readonly json?: boolean;
}

/** Errors come back as exceptions (printed by runCli, as text or JSON), never as process.exit(). */
export function reportErrorsOurselves(command: Command): Command {
  return command
    .exitOverride()
    .configureOutput({ outputError: () => undefined })
    .showSuggestionAfterError(true);
}

export function addNodeOptions(command: Command): Command {
  return command.option(
    '--redis <url>',
    `a Redis node, redis://[user:password@]host:port[/db], or a Sentinel-managed master, ` +
      `redis+sentinel://[user:password@]host:port[,host:port...]/MASTER-NAME[/db]; repeat it for a Redlock quorum (default: ${URLS_ENV}, comma-separated)`,
    (url: string, previous: string[] | undefined) => [...(previous ?? []), url],
  );
}

export function addQueryOptions(command: Command): Command {
  return command
    .addOption(durationOption('--timeout <duration>', 'time each node has to connect and answer', 1).default(2000, '2s'))
    .option('--json', 'print the result as one line of JSON');
}

export function durationOption(flags: string, description: string, minMs: number): Option {
  return new Option(flags, description).argParser(commanderParser((text) => parseDuration(text, minMs)));
}

/** Commander reports its InvalidArgumentError naming the option and the bad value. */
export function commanderParser<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

/** A replica count for --sync-replicas: a whole number from 1. */
export function parseReplicaCount(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(count) || count < 1) throw new Error('expected a whole number of replicas, 1 or more');
  return count;
}

export function nodesFrom(flags: CommonFlags, env: NodeJS.ProcessEnv): NodeAddress[] {
  return resolveNodeAddresses(flags.redis ?? [], env[URLS_ENV]);
}

/** A semaphore's limit for --limit: a whole number from 1 to the library's largest. */
export function parseLimit(text: string): number {
  const limit = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new Error(`expected a whole number of holders from 1 to ${MAX_LIMIT}`);
  }
  return limit;
}

/** Throws the library's InvalidArgumentError (a usage error here) for an empty name. */
export function checkResource(resource: string): string {
  normalizeResources(resource, 'RESOURCE');
  return resource;
}

export function checkValue(value: string): string {
  if (value === '') throw new CliFailure('usage', ExitCode.USAGE, 'Invalid --value: expected a non-empty string', { argument: '--value' });
  return value;
}
