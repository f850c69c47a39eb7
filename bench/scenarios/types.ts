import type { BenchLocker } from '../contenders/types.js';
import type { MetricId, Sample } from '../metrics.js';

/** Bounds of one measurement: it stops at whichever comes first. */
export interface Budget {
  readonly maxCycles: number;
  readonly maxMs: number;
  /**
   * After maxMs, how long to wait for acquires still in flight (libraries
   * without an AbortSignal finish their retry loop) before giving up on them.
   */
  readonly drainMs: number;
}

export interface ScenarioContext {
  readonly locker: BenchLocker;
  /** Unique per contender, topology, scenario and round: no two measurements share a key. */
  readonly keyPrefix: string;
  readonly ttlMs: number;
  readonly budget: Budget;
}

export interface Measurement {
  /** Metrics of this round (commands are added by the runner). */
  readonly sample: Sample;
  /** Cycles completed in all, drain included: the divisor for commands per cycle. */
  readonly cyclesTotal: number;
  /** Anything the reader should know about this round (printed with the progress). */
  readonly note?: string | undefined;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly kind: 'uncontended' | 'contended';
  /** The metric the ratios and the chart are about. */
  readonly headline: MetricId;
  /** Columns of the terminal table, in order. */
  readonly columns: readonly MetricId[];
  run(context: ScenarioContext): Promise<Measurement>;
}
