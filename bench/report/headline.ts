/**
 * The few numbers a reader wants first: quorumlock against the raw floor and
 * the best peer, with the project's goals checked (ratios from this run only).
 */
import { METRICS, type MetricId } from '../metrics.js';
import type { RunResult, ScenarioResult, TopologyResult } from '../results.js';
import { formatMetric, formatRatio } from './format.js';
import { bestPeer, floorOf, oursOf, ratio, roundRatioRange } from './ratios.js';
import { contenderLabel } from './table.js';

export interface HeadlineLine {
  readonly nodes: number;
  readonly scenario: string;
  readonly metric: MetricId;
  readonly text: string;
  /** Goal met (true), missed (false), or no goal on this line (undefined). */
  readonly goalMet: boolean | undefined;
  readonly vsFloor: number;
  readonly vsBestPeer: number;
  readonly bestPeer: string | undefined;
}

const UNCONTENDED_FLOOR_GOAL = 1.1;
/** 64 workers on distinct keys, the first thing users measure: ahead with a margin on any machine (issue #30). */
const PARALLEL_PEER_GOAL = 1.3;
/** What a contended line adds to the throughput: how long waits were, how fair, what it cost Redis. */
const IN_PROCESS_CONTENDED: readonly MetricId[] = ['waitP99Ms', 'jain', 'cmdsPerCycle'];
const ACROSS_PROCESSES: readonly MetricId[] = ['waitP99Ms', 'fifoRatio', 'jainWaiters', 'cmdsPerCycleNode'];

export function headline(run: RunResult): HeadlineLine[] {
  const lines: HeadlineLine[] = [];
  const counts = run.topologies.map((t) => t.nodes);
  const goalNodes = new Set([Math.min(...counts), Math.max(...counts)]);
  for (const topology of run.topologies) {
    for (const scenario of topology.scenarios) {
      const line = lineFor(topology, scenario, goalNodes.has(topology.nodes));
      if (line !== undefined) lines.push(line);
    }
  }
  return lines;
}

function lineFor(topology: TopologyResult, scenario: ScenarioResult, goalTopology: boolean): HeadlineLine | undefined {
  const ours = oursOf(scenario);
  if (ours === undefined) return undefined;
  const metric = scenario.headline;
  const floor = floorOf(scenario);
  const peer = bestPeer(scenario);
  const vsFloor = ratio(ours, floor, metric);
  const vsBestPeer = ratio(ours, peer, metric);
  const better = METRICS[metric].better;
  const beatsPeer = peer === undefined || (better === 'higher' ? vsBestPeer >= 1 : vsBestPeer <= 1);
  let goalMet: boolean | undefined;
  let goal = '';
  if (scenario.id === 'uncontended' && goalTopology) {
    goalMet = vsFloor <= UNCONTENDED_FLOOR_GOAL && beatsPeer;
    goal = ` [goal: ≤ ${UNCONTENDED_FLOOR_GOAL}× floor and ≤ best peer]`;
  } else if (scenario.id === 'parallel-64') {
    goalMet = peer === undefined || vsBestPeer >= PARALLEL_PEER_GOAL;
    goal = ` [goal: ≥ ${PARALLEL_PEER_GOAL}× best peer]`;
  }
  let value = `${formatMetric(metric, ours.median[metric])} ${METRICS[metric].heading}`;
  if (scenario.kind === 'contended') {
    // Throughput alone rewards a lock that lets the releaser barge back in: say how fair it was.
    const also = (scenario.columns.includes('jain') ? IN_PROCESS_CONTENDED : ACROSS_PROCESSES).map(
      (id) => `${METRICS[id].heading} ${formatMetric(id, ours.median[id])} (best peer ${formatMetric(id, peer?.median[id])})`,
    );
    value += ` [${also.join(', ')}]`;
  }
  const [lowest, highest] = roundRatioRange(ours, peer, metric);
  const perRound = scenario.rounds > 1 && Number.isFinite(lowest) ? `, ${formatRatio(lowest)}–${formatRatio(highest)} per round` : '';
  const peerText = peer === undefined ? 'no peer' : `${formatRatio(vsBestPeer)} best peer (${contenderLabel(peer)}${perRound})`;
  const mark = goalMet === undefined ? ' ' : goalMet ? '✓' : '✗';
  const nodes = `${topology.nodes} node${topology.nodes === 1 ? '' : 's'}`;
  return {
    nodes: topology.nodes,
    scenario: scenario.id,
    metric,
    text: `${mark} ${nodes.padEnd(7)} ${scenario.id.padEnd(13)} ${value}: ${formatRatio(vsFloor)} floor, ${peerText}${goal}`,
    goalMet,
    vsFloor,
    vsBestPeer,
    bestPeer: peer?.key,
  };
}

export function renderHeadline(lines: readonly HeadlineLine[]): string {
  return ['quorumlock (defaults), headline metric of each scenario, ratios in this run:', ...lines.map((l) => l.text)].join('\n');
}
