/**
 * How every property in test/property runs, read from the environment so a
 * failure can be replayed with one command (scripts/test-property.mjs maps
 * `--runs/--seed/--path/--replay-path` to these variables):
 *
 *   FC_RUNS=N          runs per property (default: each property's own, small count)
 *   FC_SEED=S          seed of the first run
 *   FC_PATH=P          with FC_SEED: replay only the run (and shrink) at this path
 *   FC_REPLAY_PATH=R   with FC_SEED/FC_PATH: fc.commands' replay hint of a model-based counterexample
 *   FC_VERBOSE=1|2     fast-check's verbose report
 *
 * checkProperty() runs the property with fc.check and, on failure, throws
 * fast-check's report plus the exact command that replays it.
 */
import { relative } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';

interface Environment {
  readonly runs?: number;
  readonly seed?: number;
  readonly path?: string;
  readonly replayPath?: string;
  readonly verbose?: fc.VerbosityLevel;
}

function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const integer = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got "${raw}"`);
    return value;
  };
  const text = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
  const runs = integer('FC_RUNS');
  if (runs !== undefined && runs < 1) throw new Error(`FC_RUNS must be at least 1, got ${runs}`);
  const path = text('FC_PATH');
  const seed = integer('FC_SEED');
  if (path !== undefined && seed === undefined) throw new Error('FC_PATH replays a run of FC_SEED: set both');
  const verbose = integer('FC_VERBOSE');
  return {
    ...(runs === undefined ? {} : { runs }),
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
    ...(text('FC_REPLAY_PATH') === undefined ? {} : { replayPath: text('FC_REPLAY_PATH') as string }),
    ...(verbose === undefined ? {} : { verbose: verbose as fc.VerbosityLevel }),
  };
}

export const fcEnvironment: Environment = readEnvironment();

/** Prints what a property exercised (its tallies) when FC_VERBOSE is set; quiet otherwise. */
export function report(label: string, counts: Record<string, number>): void {
  if (fcEnvironment.verbose !== undefined) console.log(`${label}: ${JSON.stringify(counts)}`);
}

/**
 * Whether the property ran at least its default number of times: only then is "every kind
 * of outcome showed up" a fair demand (`--runs 5` is for a quick look, and a replay of one
 * run's path plays that run alone).
 */
export function fullRun(defaultRuns: number): boolean {
  return fcEnvironment.path === undefined && runsFor(defaultRuns) >= defaultRuns;
}

/** Runs of a property: FC_RUNS when set, else the property's default. */
export function runsFor(defaultRuns: number): number {
  return fcEnvironment.runs ?? defaultRuns;
}

/**
 * A vitest timeout for a test whose `defaultRuns` take about `defaultMs`:
 * grows with FC_RUNS, so `--runs 2000` is not cut off by the 30 s default.
 */
export function timeoutFor(defaultRuns: number, defaultMs: number): number {
  return Math.max(defaultMs, Math.ceil((defaultMs * runsFor(defaultRuns)) / defaultRuns) * 2);
}

/** Constraints for fc.commands: carries FC_REPLAY_PATH when replaying. */
export function commandsConstraints(constraints: fc.CommandsContraints = {}): fc.CommandsContraints {
  return fcEnvironment.replayPath === undefined ? constraints : { ...constraints, replayPath: fcEnvironment.replayPath };
}

export function parametersFor<Ts>(defaultRuns: number, extra: fc.Parameters<Ts> = {}): fc.Parameters<Ts> {
  const { runs: _, seed, path, verbose } = fcEnvironment;
  return {
    ...extra,
    numRuns: runsFor(defaultRuns),
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path, endOnFailure: true }),
    ...(verbose === undefined ? {} : { verbose }),
  };
}

/**
 * fc.assert with the environment's settings, and a failure message that ends
 * with the one command replaying this counterexample.
 */
export async function checkProperty<Ts>(
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  defaultRuns: number,
  extra: fc.Parameters<Ts> = {},
): Promise<void> {
  const details = await fc.check(property as fc.IRawProperty<Ts>, parametersFor(defaultRuns, extra));
  if (!details.failed) return;
  const report = (await fc.asyncDefaultReportMessage(details)) ?? `Property failed (seed ${details.seed})`;
  const replayPath = /replayPath="([^"]*)"/.exec(report)?.[1];
  const replay = replayCommand(details.seed, details.counterexamplePath ?? undefined, replayPath);
  const error = new Error(`${report}\n\nReplay this failure with:\n  ${replay}\n`);
  if (details.errorInstance instanceof Error) error.cause = details.errorInstance;
  throw error;
}

function replayCommand(seed: number, path: string | undefined, replayPath: string | undefined): string {
  const state = expect.getState();
  const file = state.testPath === undefined ? '' : ` ${relative(process.cwd(), state.testPath)}`;
  const name = state.currentTestName?.split(' > ').at(-1);
  const filter = name === undefined ? '' : ` -t ${shellQuote(escapeRegExp(name))}`;
  const pathArgument = path === undefined ? '' : ` --path ${shellQuote(path)}`;
  const replayArgument = replayPath === undefined ? '' : ` --replay-path ${shellQuote(replayPath)}`;
  return `npm run test:property -- --seed ${seed}${pathArgument}${replayArgument}${file}${filter}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
