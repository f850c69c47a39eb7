/**
 * Ratios within one scenario of one run: each contender against the raw
 * floor and against the best peer, on the scenario's headline metric.
 */
import { METRICS, type MetricId } from '../metrics.js';
import type { ContenderResult, ScenarioResult } from '../results.js';

/**
 * The raw floor; for one of the node-redis entrants (library ids ending in
 * '-node-redis'), the floor on node-redis when it was measured, so that a
 * ratio compares two cycles on the same client.
 */
export function floorOf(scenario: ScenarioResult, of?: ContenderResult): ContenderResult | undefined {
  const floors = scenario.contenders.filter((c) => c.role === 'floor');
  const onNodeRedis = of?.library.endsWith(NODE_REDIS_SUFFIX) ?? false;
  return floors.find((c) => c.library.endsWith(NODE_REDIS_SUFFIX) === onNodeRedis) ?? floors[0];
}

const NODE_REDIS_SUFFIX = '-node-redis';

export function oursOf(scenario: ScenarioResult): ContenderResult | undefined {
  return scenario.contenders.find((c) => c.role === 'ours');
}

/** The peer (any library, any variant) with the best value of `metric`. */
export function bestPeer(scenario: ScenarioResult, metric: MetricId = scenario.headline): ContenderResult | undefined {
  const better = METRICS[metric].better;
  let best: ContenderResult | undefined;
  for (const c of scenario.contenders) {
    if (c.role !== 'peer') continue;
    const value = c.median[metric];
    if (value === undefined || !Number.isFinite(value)) continue;
    const current = best?.median[metric];
    if (current === undefined || (better === 'higher' ? value > current : value < current)) best = c;
  }
  return best;
}

/** `c`'s value over `reference`'s, in the metric's own direction (e.g. p50 1.08× = 8 % slower). */
export function ratio(c: ContenderResult, reference: ContenderResult | undefined, metric: MetricId): number {
  const value = c.median[metric];
  const base = reference?.median[metric];
  if (value === undefined || base === undefined || base === 0) return Number.NaN;
  return value / base;
}

/** How much faster than `reference` (above 1) or slower (below 1), whatever the metric's direction. */
export function speedup(c: ContenderResult, reference: ContenderResult | undefined, metric: MetricId): number {
  const r = ratio(c, reference, metric);
  return METRICS[metric].better === 'lower' ? 1 / r : r;
}

/** The smallest and largest of `c`'s rounds on `metric` (NaN when it has none). */
export function roundRange(c: ContenderResult, metric: MetricId): [number, number] {
  return spread(c.rounds.map((sample) => sample[metric] ?? Number.NaN));
}

/**
 * The smallest and largest ratio of `c` to `reference` within one round:
 * contenders take turns inside a round, so each round's ratio compares them
 * on about the same machine, however much the machine drifted between rounds.
 */
export function roundRatioRange(c: ContenderResult, reference: ContenderResult | undefined, metric: MetricId): [number, number] {
  if (reference === undefined) return [Number.NaN, Number.NaN];
  return spread(c.rounds.map((sample, round) => (sample[metric] ?? Number.NaN) / (reference.rounds[round]?.[metric] ?? Number.NaN)));
}

function spread(values: readonly number[]): [number, number] {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? [Number.NaN, Number.NaN] : [Math.min(...finite), Math.max(...finite)];
}
