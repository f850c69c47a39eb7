/** Where the benchmark docs come from and go, for the script and its test. */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from '../../bench/results.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export function benchmarkFiles() {
  return {
    jsonName: 'docs/data/benchmarks.json',
    json: join(ROOT, 'docs/data/benchmarks.json'),
    page: join(ROOT, 'docs/guide/benchmarks.md'),
    chart: join(ROOT, 'docs/public/benchmarks.svg'),
    readme: join(ROOT, 'README.md'),
  };
}

/** A results JSON as `npm run bench` writes it (JSON's null stands for "no value"). */
export async function readRun(path: string): Promise<RunResult> {
  return JSON.parse(await readFile(path, 'utf8'), (_key, value: unknown) => (value === null ? Number.NaN : value)) as RunResult;
}
