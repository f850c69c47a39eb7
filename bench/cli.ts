/** Command-line options of `npm run bench`. */
import { parseArgs } from 'node:util';

export interface CliOptions {
  /** Nodes given by the user; empty: start local ones. */
  readonly urls: readonly string[];
  /** Node counts to measure (topologies); undefined: the default for the mode. */
  readonly nodeCounts: readonly number[] | undefined;
  readonly quick: boolean;
  /** Every scenario on 1, 3 and 5 nodes; without it the headline's scenarios on 1 and 5 nodes. */
  readonly full: boolean;
  readonly rounds: number | undefined;
  /** Scenario ids to run; empty: all. */
  readonly scenarios: readonly string[];
  /** Peers to run, `library` or `library:variant`; empty: all (the floor and quorumlock always run). */
  readonly contenders: readonly string[];
  readonly outDir: string;
  /** Another checkout whose src/ is built and measured beside this one. */
  readonly candidate: string | undefined;
  /** The procs scenario's shape and timeout; undefined: the mode's default. */
  readonly procs: {
    readonly processes: number | undefined;
    readonly waiters: number | undefined;
    readonly sections: number | undefined;
    readonly timeoutS: number | undefined;
  };
  readonly help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --url redis://host:port   a node to use (repeat for several; or env
                            QUORUMLOCK_BENCH_URLS, comma-separated). Without
                            any, local redis-server processes are started.
  --nodes 1,3,5             node counts to measure (each uses the first N nodes;
                            default 1,5, with --full 1,3,5, with --quick 1,3)
  --rounds N                measured rounds per scenario (medians are reported)
  --scenario ID             this scenario (repeatable; default: the headline's,
                            with --full or --quick all): uncontended,
                            parallel-64, contended-16, contended-200,
                            burst-200, procs, permits (the semaphore and
                            the read-write lock across processes)
  --contender LIB[:VARIANT] only this peer (repeatable; the raw floor and
                            quorumlock always run): node-redlock,
                            sesame-redlock, redis-semaphore
  --candidate DIR           also measure quorumlock built from DIR/src (e.g. a
                            git worktree with a change), side by side
  --procs-p N               procs: processes wanting the one key (default 8)
  --procs-w N               procs: concurrent waiters per process (default 8)
  --procs-k N               procs: critical sections each waiter wants (default 8)
  --procs-timeout S         procs: seconds a contender may take before it is
                            stopped and reported as unfinished (default 20;
                            sooner if its pace would need over 4× that)
  --full                    every scenario on 1, 3 and 5 nodes (~10 min); the
                            default run measures the headline's: uncontended,
                            parallel-64, procs and permits on 1 and 5 nodes
                            (~4 min)
  --quick                   tiny counts, for a smoke test (numbers meaningless)
  --out DIR                 where the JSON and SVG go (default bench/results)
  --help
`;

export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      url: { type: 'string', multiple: true },
      nodes: { type: 'string' },
      rounds: { type: 'string' },
      scenario: { type: 'string', multiple: true },
      contender: { type: 'string', multiple: true },
      quick: { type: 'boolean' },
      full: { type: 'boolean' },
      out: { type: 'string' },
      candidate: { type: 'string' },
      'procs-p': { type: 'string' },
      'procs-w': { type: 'string' },
      'procs-k': { type: 'string' },
      'procs-timeout': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const fromEnv = (env['QUORUMLOCK_BENCH_URLS'] ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  const urls = values.url !== undefined && values.url.length > 0 ? values.url : fromEnv;
  for (const url of urls) {
    if (!/^rediss?:\/\//.test(url)) throw new Error(`--url: expected redis://host:port, got ${JSON.stringify(url)}`);
  }
  return {
    urls,
    nodeCounts: values.nodes === undefined ? undefined : parseCounts(values.nodes),
    quick: values.quick === true,
    full: values.full === true,
    rounds: optionalInteger(values.rounds, '--rounds'),
    scenarios: values.scenario ?? [],
    contenders: values.contender ?? [],
    outDir: values.out ?? 'bench/results',
    candidate: values.candidate,
    procs: {
      processes: optionalInteger(values['procs-p'], '--procs-p'),
      waiters: optionalInteger(values['procs-w'], '--procs-w'),
      sections: optionalInteger(values['procs-k'], '--procs-k'),
      timeoutS: optionalInteger(values['procs-timeout'], '--procs-timeout'),
    },
    help: values.help === true,
  };
}

function parseCounts(text: string): number[] {
  const counts = text.split(',').map((part) => positiveInteger(part.trim(), '--nodes'));
  return [...new Set(counts)].sort((a, b) => a - b);
}

function optionalInteger(text: string | undefined, option: string): number | undefined {
  return text === undefined ? undefined : positiveInteger(text, option);
}

function positiveInteger(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${option}: expected a positive integer, got ${JSON.stringify(text)}`);
  return value;
}
