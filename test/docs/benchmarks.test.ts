/**
 * The benchmarks page, its chart and the README's benchmark table are what
 * `npm run docs:bench` makes of docs/data/benchmarks.json: nobody edits them by hand.
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../bench/results.js';
import { benchmarkFiles, readRun } from '../../scripts/docs/benchmarkFiles.js';
import { type BenchmarkDocs, README_END, README_START, renderBenchmarkDocs } from '../../scripts/docs/benchmarkDocs.js';

const files = benchmarkFiles();
let run: RunResult;
let docs: BenchmarkDocs;

beforeAll(async () => {
  run = await readRun(files.json);
  docs = renderBenchmarkDocs(run, files.jsonName);
});

const regenerate = 'regenerate with npm run docs:bench';

describe('the generated benchmark docs', () => {
  it('docs/guide/benchmarks.md is what the script makes of the committed JSON', async () => {
    expect(await readFile(files.page, 'utf8'), regenerate).toBe(docs.page);
  });

  it('docs/public/benchmarks.svg is the chart of the same run', async () => {
    expect(await readFile(files.chart, 'utf8'), regenerate).toBe(docs.chart);
  });

  it("README.md's table between its markers is the script's, at most 20 lines", async () => {
    const readme = await readFile(files.readme, 'utf8');
    const start = readme.indexOf(README_START);
    const end = readme.indexOf(README_END);
    expect(start >= 0 && end > start, `README.md must hold ${README_START} … ${README_END}`).toBe(true);
    expect(readme.slice(start + README_START.length, end), regenerate).toBe(docs.readmeBlock);
    expect(docs.readmeBlock.trim().split('\n').length).toBeLessThanOrEqual(20);
  });

  it('names the machine, the date and the medians with their spread', () => {
    expect(docs.page).toContain(`${run.meta.cpus} × ${run.meta.cpuModel}`);
    expect(docs.page).toContain(run.meta.startedAt.slice(0, 10));
    expect(docs.page).toMatch(/\(median\) \| [^\n]*min–max/);
  });

  it('renders a run that lacks scenarios (a narrower run of the bench)', () => {
    const narrow: RunResult = { ...run, topologies: run.topologies.slice(0, 1).map((t) => ({ ...t, scenarios: t.scenarios.slice(0, 1) })) };
    const only = renderBenchmarkDocs(narrow, files.jsonName);
    expect(only.readmeBlock.trim().split('\n').filter((line) => line.startsWith('| ')).length).toBe(3);
    expect(only.page).not.toContain('## procs');
  });
});
