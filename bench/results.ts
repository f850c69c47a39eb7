/** The shape of a run's results: what the JSON holds and the reports read. */
import type { MetricId, Sample } from './metrics.js';
import type { RunMode } from './plan.js';
import type { Budget } from './scenarios/index.js';
import { type Contender, contenderKey } from './contenders/index.js';

export interface ContenderResult {
  /** `library:variant`. */
  readonly key: string;
  readonly library: string;
  readonly variant: 'defaults' | 'best';
  readonly role: 'floor' | 'ours' | 'candidate' | 'peer';
  /** The class used for this node count, e.g. 'RedisLock', 'RedlockMutex'. */
  readonly className: string;
  readonly settings: string;
  /** One sample per measured round, in round order. */
  readonly rounds: Sample[];
  /** Median over rounds, per metric. */
  median: Sample;
  /** Commands Redis executed per cycle, by command name, over all rounds. */
  commandsPerCycle: Record<string, number>;
  /** Server CPU per call in µs, by command name, over all rounds (INFO commandstats usec/calls). */
  usecPerCall: Record<string, number>;
  readonly notes: string[];
  /** Set when the contender was cut off by a timeout (procs): the table says so next to its numbers. */
  unfinished?: string;
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly kind: 'uncontended' | 'contended';
  readonly headline: MetricId;
  readonly columns: readonly MetricId[];
  readonly rounds: number;
  readonly budget: Budget;
  readonly contenders: ContenderResult[];
  /** The scenario's own parameters, e.g. procs: processes, waiters, sections, holdMs, timeoutS. */
  readonly parameters?: Readonly<Record<string, number>>;
  /** Lines printed under the scenario's table (references and caveats of this run). */
  readonly footnotes?: readonly string[];
}

export interface TopologyResult {
  readonly nodes: number;
  readonly scenarios: ScenarioResult[];
}

export interface RunMeta {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationS: number;
  readonly mode: RunMode;
  readonly command: string;
  readonly node: string;
  readonly platform: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly redisVersion: string;
  /** 'local' when the run started its own redis-server processes. */
  readonly nodesSource: 'local' | 'user';
  readonly ttlMs: number;
}

export interface RunResult {
  readonly meta: RunMeta;
  readonly topologies: TopologyResult[];
  /** The semaphore and the read-write lock across processes, when the run measured them. */
  readonly permits?: PermitsResult;
}

/** A contender's result before any round: every scenario fills the same shape. */
export function emptyResult(contender: Contender, nodes: number): ContenderResult {
  return {
    key: contenderKey(contender),
    library: contender.library,
    variant: contender.variant,
    role: contender.role,
    className: contender.className(nodes),
    settings: contender.settings,
    rounds: [],
    median: {},
    commandsPerCycle: {},
    usecPerCall: {},
    notes: [],
  };
}

/** One round of one contender in the permits scenario (bench/permits). */
export interface PermitSample {
  /** Critical sections per second, all processes together (reads and writes for a read-write lock). */
  readonly sectionsPerSec: number;
  /** Write sections per second (a read-write lock); 0 otherwise. */
  readonly writesPerSec: number;
  /**
   * sectionsPerSec ÷ the hold cap (holders allowed at once × 1000 ÷ the mean
   * hold measured in this round): 1 would be every allowed holder busy all
   * the time with instant handoffs. NaN for a read-write lock, where readers
   * have no count.
   */
  readonly capShare: number;
  /** Requests the processes' clients sent per critical section. */
  readonly requestsPerSection: number;
  /** Wait p99 of the semaphore's waiters (of the readers, for a read-write lock), ms. */
  readonly waitP99Ms: number;
  /** Wait p99 of the writers, ms; NaN without writers. */
  readonly writerWaitP99Ms: number;
  readonly meanHoldMs: number;
  /** The most holders at one moment. */
  readonly maxHolders: number;
  /** Sections that began where they must not (bench/permits/holders.ts): must be 0. */
  readonly violations: number;
}

export interface PermitRow {
  readonly primitive: 'semaphore' | 'rwlock';
  readonly nodes: number;
  readonly library: 'quorumlock' | 'redis-semaphore';
  /** What a user would use without this primitive (the mutex beside the read-write lock), or the primitive. */
  readonly role: 'ours' | 'peer' | 'reference';
  readonly className: string;
  readonly rounds: PermitSample[];
  /** Medians over the rounds; maxHolders the largest of any round, violations the sum of all. */
  summary: PermitSample;
}

export interface PermitsResult {
  readonly limit: number;
  readonly processes: number;
  readonly waitersPerProcess: number;
  /** Of each process's waiters on a read-write lock, how many write. */
  readonly writersPerProcess: number;
  readonly holdMs: number;
  readonly phaseMs: number;
  readonly rounds: number;
  /** The largest uncertainty of the worker processes' time bases: holds closer than this may be misordered. */
  readonly timeUncertaintyMs: number;
  readonly rows: PermitRow[];
}
