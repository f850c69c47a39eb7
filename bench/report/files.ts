/** Writes a run's JSON and SVG next to each other, named by its start time. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { RunResult } from '../results.js';
import { renderChart } from './chart.js';
import type { HeadlineLine } from './headline.js';
import { bestPeer, floorOf, ratio } from './ratios.js';

export interface WrittenFiles {
  readonly json: string;
  readonly svg: string;
}

export async function writeResults(run: RunResult, headline: readonly HeadlineLine[], outDir: string): Promise<WrittenFiles> {
  const dir = resolve(outDir);
  await mkdir(dir, { recursive: true });
  const stamp = run.meta.startedAt.replace(/[:.]/g, '-');
  const json = join(dir, `${stamp}.json`);
  const svg = join(dir, `${stamp}.svg`);
  await writeFile(json, `${JSON.stringify(withRatios(run, headline), finiteOrNull, 2)}\n`);
  await writeFile(svg, renderChart(run));
  return { json, svg };
}

/** The run plus, per contender, its headline ratios against the floor and the best peer. */
function withRatios(run: RunResult, headline: readonly HeadlineLine[]): unknown {
  return {
    meta: run.meta,
    headline: headline.map(({ text, ...rest }) => ({ ...rest, text: text.slice(2) })),
    ...(run.permits === undefined ? {} : { permits: run.permits }),
    topologies: run.topologies.map((topology) => ({
      nodes: topology.nodes,
      scenarios: topology.scenarios.map((scenario) => {
        const floor = floorOf(scenario);
        const peer = bestPeer(scenario);
        return {
          ...scenario,
          bestPeer: peer?.key,
          contenders: scenario.contenders.map((c) => ({
            ...c,
            vsFloor: ratio(c, floor, scenario.headline),
            vsBestPeer: ratio(c, peer, scenario.headline),
          })),
        };
      }),
    })),
  };
}

/** JSON has no NaN or Infinity: write null for "no value". */
function finiteOrNull(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}
