/**
 * What one run measures and how long each measurement may take. The default
 * run fits in a few minutes on 2 cores; --quick only proves every path works.
 */
import type { CliOptions } from './cli.js';
import type { Contender } from './contenders/index.js';
import { PERMITS_ID, type PermitsPlan } from './permits/run.js';
import { SCENARIOS, type Budget, type Scenario } from './scenarios/index.js';
import {
  PROCS_DEFAULT_SHAPE,
  PROCS_DEFAULT_TIMEOUT_S,
  PROCS_ID,
  PROCS_QUICK_SHAPE,
  PROCS_QUICK_TIMEOUT_S,
  type ProcsShape,
} from './scenarios/procs.js';

/** headline: the scenarios of the headline's goals, on 1 and 5 nodes (the default); full: all; quick: a smoke test. */
export type RunMode = 'headline' | 'full' | 'quick';

/** What the default run measures: the scenarios whose rows the headline's goals are about. */
export const HEADLINE_SCENARIOS: readonly string[] = ['uncontended', 'parallel-64', PROCS_ID, PERMITS_ID];
const NODE_COUNTS: Record<RunMode, readonly number[]> = { headline: [1, 5], full: [1, 3, 5], quick: [1, 3] };

export interface Plan {
  readonly mode: RunMode;
  /** Topologies, smallest first; each uses the first N nodes. */
  readonly nodeCounts: readonly number[];
  /** The topologies a scenario runs on (contention only on the smallest and largest, by default). */
  readonly nodeCountsFor: (scenario: Scenario) => readonly number[];
  /** How many nodes to start when no URLs are given. */
  readonly localNodes: number;
  readonly scenarios: readonly Scenario[];
  readonly contenders: readonly Contender[];
  readonly rounds: (scenario: Scenario) => number;
  readonly budget: (scenario: Scenario) => Budget;
  /**
   * Unmeasured run of each contender before a scenario's rounds (JIT, script
   * cache, connections); none with --quick, whose figures mean nothing: a
   * warmup there is 200 waiters draining after the window, most of the
   * smoke test's time.
   */
  readonly warmup: (scenario: Scenario) => Budget | undefined;
  /** Passes of the mixed measurement after the rounds (see scenarios/mixed.ts); 0 for none. */
  readonly mixedPasses: (scenario: Scenario) => number;
  /** Lock TTL in every scenario: long enough that no lock expires while held. */
  readonly ttlMs: number;
  /** The multi-process scenario (bench/procs/), when it runs. */
  readonly procs: ProcsPlan | undefined;
  /** The semaphore and the read-write lock across processes (bench/permits/), when they run. */
  readonly permits: PermitsPlan | undefined;
}

export interface ProcsPlan {
  readonly shape: ProcsShape;
  /** A contender still busy this long after go is stopped and reported as unfinished. */
  readonly timeoutMs: number;
  /** Every topology (--quick: only the largest; every measurement starts P node processes). */
  readonly nodeCounts: readonly number[];
  readonly rounds: number;
  /** As in the in-process contended scenarios: each peer at its defaults and at its best settings. */
  readonly contenders: readonly Contender[];
}

// Short slices, many rounds: this machine's speed drifts within seconds, and
// each contender should see the same mix of fast and slow moments.
const FULL: Record<string, { rounds: number; budget: Budget; warmup: Budget; mixedPasses?: number }> = {
  uncontended: {
    rounds: 12,
    budget: { maxCycles: 1000, maxMs: 150, drainMs: 0 },
    warmup: { maxCycles: 500, maxMs: 200, drainMs: 0 },
    // 200 bursts of 16 cycles each: about 3 s per topology with six contenders.
    mixedPasses: 200,
  },
  'parallel-64': {
    // 15 rounds: the median and its min–max hold still on this shared machine (issue #30 measured with 15).
    rounds: 15,
    budget: { maxCycles: 100_000, maxMs: 250, drainMs: 0 },
    warmup: { maxCycles: 50_000, maxMs: 150, drainMs: 0 },
  },
  'contended-16': {
    rounds: 3,
    budget: { maxCycles: 100_000, maxMs: 800, drainMs: 5000 },
    warmup: { maxCycles: 100_000, maxMs: 200, drainMs: 5000 },
  },
  'contended-200': {
    rounds: 3,
    budget: { maxCycles: 100_000, maxMs: 1500, drainMs: 5000 },
    warmup: { maxCycles: 100_000, maxMs: 200, drainMs: 5000 },
  },
  // Ends when every waiter was served once; the window only bounds a library
  // that cannot serve them all (its waiters give up or are still waiting).
  'burst-200': {
    rounds: 3,
    budget: { maxCycles: 100_000, maxMs: 4000, drainMs: 5000 },
    warmup: { maxCycles: 100_000, maxMs: 200, drainMs: 5000 },
  },
};

const QUICK: Record<string, Budget> = {
  uncontended: { maxCycles: 30, maxMs: 200, drainMs: 0 },
  'parallel-64': { maxCycles: 640, maxMs: 100, drainMs: 0 },
  'contended-16': { maxCycles: 10_000, maxMs: 200, drainMs: 3000 },
  'contended-200': { maxCycles: 10_000, maxMs: 400, drainMs: 3000 },
  'burst-200': { maxCycles: 10_000, maxMs: 400, drainMs: 3000 },
};
const QUICK_MIXED_PASSES = 2;

/** `available`: every contender this run could measure; the options pick among them. */
export function makePlan(cli: CliOptions, available: readonly Contender[]): Plan {
  if (cli.quick && cli.full) throw new Error('--quick and --full: pick one');
  const mode: RunMode = cli.quick ? 'quick' : cli.full ? 'full' : 'headline';
  const given = cli.urls.length > 0 ? cli.urls.length : Number.POSITIVE_INFINITY;
  const wanted = cli.nodeCounts ?? NODE_COUNTS[mode];
  let nodeCounts = wanted.filter((n) => n <= given);
  // With user nodes and no --nodes: also measure all of them together.
  if (cli.nodeCounts === undefined && Number.isFinite(given) && !nodeCounts.includes(given)) {
    nodeCounts = [...nodeCounts, given];
  }
  if (nodeCounts.length === 0) {
    throw new Error(`--nodes ${wanted.join(',')}: only ${cli.urls.length} node URL(s) given`);
  }

  const scenarioIds = cli.scenarios.length > 0 ? cli.scenarios : mode === 'headline' ? HEADLINE_SCENARIOS : undefined;
  const scenarios = scenarioIds === undefined ? SCENARIOS : SCENARIOS.filter((s) => scenarioIds.includes(s.id));
  const known = [...SCENARIOS.map((s) => s.id), PROCS_ID, PERMITS_ID];
  const unknownScenario = cli.scenarios.find((id) => !known.includes(id));
  if (unknownScenario !== undefined) {
    throw new Error(`--scenario ${unknownScenario}: unknown (known: ${known.join(', ')})`);
  }

  const named = (c: Contender, name: string): boolean => name === c.library || name === `${c.library}:${c.variant}`;
  const isNamed = (c: Contender): boolean => cli.contenders.some((name) => named(c, name));
  const picked = (c: Contender): boolean =>
    c.onlyWhenNamed === true ? isNamed(c) : c.role !== 'peer' || cli.contenders.length === 0 || isNamed(c);
  const contenders = available.filter(picked);
  const unknownContender = cli.contenders.find((name) => !available.some((c) => named(c, name)));
  if (unknownContender !== undefined) {
    throw new Error(`--contender ${unknownContender}: unknown (known: ${[...new Set(available.map((c) => c.library))].join(', ')})`);
  }

  const full = (scenario: Scenario): (typeof FULL)[string] => {
    const entry = FULL[scenario.id];
    if (entry === undefined) throw new Error(`no budget for scenario ${scenario.id}`);
    return entry;
  };
  // Contended rounds take seconds each: by default they run on the smallest
  // and the largest topology only (--nodes runs every scenario on every count).
  const edges = [...new Set([Math.min(...nodeCounts), Math.max(...nodeCounts)])];
  const nodeCountsFor = (scenario: Scenario): readonly number[] =>
    scenario.kind === 'contended' && cli.nodeCounts === undefined && !cli.quick ? edges : nodeCounts;
  return {
    mode,
    nodeCounts,
    nodeCountsFor,
    localNodes: Math.max(...nodeCounts),
    scenarios,
    contenders,
    rounds: (scenario) => (cli.quick ? 1 : (cli.rounds ?? full(scenario).rounds)),
    budget: (scenario) => (cli.quick ? (QUICK[scenario.id] ?? full(scenario).budget) : full(scenario).budget),
    warmup: (scenario) => (cli.quick ? undefined : full(scenario).warmup),
    mixedPasses: (scenario) => {
      const passes = full(scenario).mixedPasses ?? 0;
      return cli.quick ? Math.min(passes, QUICK_MIXED_PASSES) : passes;
    },
    ttlMs: 10_000,
    procs:
      scenarioIds === undefined || scenarioIds.includes(PROCS_ID)
        ? procsPlan(cli, nodeCounts, contenders.filter((c) => differs(c, 'contended')))
        : undefined,
    permits: scenarioIds === undefined || scenarioIds.includes(PERMITS_ID) ? permitsPlan(cli, mode, nodeCounts, edges) : undefined,
  };
}

/** Rounds of a second each; by default on the smallest and largest topology, as the contended scenarios. */
function permitsPlan(cli: CliOptions, mode: RunMode, nodeCounts: readonly number[], edges: readonly number[]): PermitsPlan {
  if (cli.quick) return { nodeCounts: [Math.max(...nodeCounts)], rounds: 1, phaseMs: 200 };
  return { nodeCounts: cli.nodeCounts === undefined ? edges : nodeCounts, rounds: cli.rounds ?? (mode === 'full' ? 5 : 3), phaseMs: 1000 };
}

function procsPlan(cli: CliOptions, nodeCounts: readonly number[], contenders: readonly Contender[]): ProcsPlan {
  const base = cli.quick ? PROCS_QUICK_SHAPE : PROCS_DEFAULT_SHAPE;
  return {
    shape: {
      processes: cli.procs.processes ?? base.processes,
      waiters: cli.procs.waiters ?? base.waiters,
      sections: cli.procs.sections ?? base.sections,
      holdMs: base.holdMs,
    },
    timeoutMs: (cli.procs.timeoutS ?? (cli.quick ? PROCS_QUICK_TIMEOUT_S : PROCS_DEFAULT_TIMEOUT_S)) * 1000,
    nodeCounts: cli.quick ? [Math.max(...nodeCounts)] : nodeCounts,
    rounds: cli.quick ? 1 : (cli.rounds ?? 1),
    contenders,
  };
}

/** False for a variant that would only repeat its library's defaults in scenarios of `kind`. */
function differs(c: Contender, kind: Scenario['kind']): boolean {
  return c.differsIn === undefined || c.differsIn.includes(kind);
}

/** The contenders a scenario runs: a variant that would only repeat its defaults there is skipped. */
export function contendersFor(plan: Plan, scenario: Scenario): Contender[] {
  return plan.contenders.filter((c) => differs(c, scenario.kind));
}
