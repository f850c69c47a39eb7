/** The terminal report: one table per topology and scenario. */
import { METRICS, type MetricId } from '../metrics.js';
import type { ContenderResult, RunResult, ScenarioResult } from '../results.js';
import { formatMetric, formatRatio } from './format.js';
import { bestPeer, floorOf, ratio, roundRange, roundRatioRange } from './ratios.js';

export function contenderLabel(c: ContenderResult): string {
  const variant = c.role === 'peer' ? ` (${c.variant})` : '';
  return `${c.library} ${c.className}${variant}`;
}

export function renderTables(run: RunResult): string {
  const parts: string[] = [];
  for (const topology of run.topologies) {
    for (const scenario of topology.scenarios) {
      parts.push(renderScenario(topology.nodes, scenario));
    }
  }
  return parts.join('\n');
}

function renderScenario(nodes: number, scenario: ScenarioResult): string {
  const peer = bestPeer(scenario);
  const headline = METRICS[scenario.headline].heading;
  // Only where a contender was cut off: its numbers cover part of the work.
  const status = scenario.contenders.some((c) => c.unfinished !== undefined);
  // With several rounds, the spread beside the median: a noisy machine moves single rounds a lot.
  const ranged = scenario.rounds > 1;
  const header = [
    'contender',
    ...scenario.columns.map((id) => METRICS[id].heading),
    ...(ranged ? [`${headline} min–max`] : []),
    `${headline} ×floor`,
    `${headline} ×best peer`,
    ...(ranged ? ['×best peer min–max (per round)'] : []),
    ...(status ? ['status'] : []),
  ];
  const rows = scenario.contenders.map((c) => [
    `${c === peer ? '*' : ' '} ${contenderLabel(c)}`,
    ...scenario.columns.map((id) => formatMetric(id, c.median[id])),
    ...(ranged ? [formatRange(scenario.headline, roundRange(c, scenario.headline))] : []),
    formatRatio(ratio(c, floorOf(scenario, c), scenario.headline)),
    formatRatio(ratio(c, peer, scenario.headline)),
    ...(ranged ? [c === peer ? '' : formatRatioRange(roundRatioRange(c, peer, scenario.headline))] : []),
    ...(status ? [c.unfinished ?? 'finished'] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const last = header.length - 1;
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === 0 || (status && i === last) ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const title = `${nodes} node${nodes === 1 ? '' : 's'} · ${scenario.title} · median of ${scenario.rounds} round${scenario.rounds === 1 ? '' : 's'}`;
  return [
    title,
    line(header),
    line(header.map((_, i) => '-'.repeat(widths[i] ?? 0))),
    ...rows.map(line),
    `  (* best peer on ${headline})`,
    ...(scenario.footnotes ?? []).map((note) => `  ${note}`),
    '',
  ].join('\n');
}

function formatRange(metric: MetricId, [min, max]: [number, number]): string {
  return Number.isFinite(min) ? `${formatMetric(metric, min)}–${formatMetric(metric, max)}` : '–';
}

function formatRatioRange([min, max]: [number, number]): string {
  return Number.isFinite(min) ? `${formatRatio(min)}–${formatRatio(max)}` : '–';
}
