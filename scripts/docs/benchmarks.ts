/**
 * `npm run docs:bench`: writes docs/guide/benchmarks.md, docs/public/benchmarks.svg
 * and the README's benchmark table from docs/data/benchmarks.json.
 * `npm run docs:bench -- path/to/results.json` first copies that run of
 * `npm run bench` there.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { benchmarkFiles, readRun } from './benchmarkFiles.js';
import { fillReadme, renderBenchmarkDocs } from './benchmarkDocs.js';

async function main(): Promise<void> {
  const files = benchmarkFiles();
  const given = process.argv[2];
  if (given !== undefined) await copyFile(given, files.json);
  const docs = renderBenchmarkDocs(await readRun(files.json), files.jsonName);
  await writeFile(files.page, docs.page);
  await writeFile(files.chart, docs.chart);
  await writeFile(files.readme, fillReadme(await readFile(files.readme, 'utf8'), docs.readmeBlock));
  process.stdout.write(`wrote ${files.page}, ${files.chart} and the benchmark table of ${files.readme}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`docs:bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
