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
