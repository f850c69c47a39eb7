/**
 * The procs worker (and the held scenario's child), bundled by tsup into node_modules/.cache and run with
 * plain node. Through tsx a child took 0.9 s of CPU to start (transforming
 * TypeScript), bundled 0.4 s; with 8 children per measurement on 2 cores
 * that difference is minutes per run. Peers and ioredis stay in
 * node_modules (not bundled), loaded as users load them.
 */
import { basename, join } from 'node:path';
import { build } from 'tsup';
import { cacheDir, ROOT } from '../library.js';

/** Builds bench/procs/worker.ts and returns the path of the script to run. */
export function buildWorker(): Promise<string> {
  return buildBenchScript('procs-worker', join('bench', 'procs', 'worker.ts'));
}

/** Builds one bench script (`entry`, from the checkout's root) as `<name>/<its file name>.js`; returns its path. */
export async function buildBenchScript(name: string, entry: string): Promise<string> {
  const outDir = cacheDir(name);
  const base = basename(entry, '.ts');
  await build({
    config: false,
    entry: { [base]: join(ROOT, entry) },
    outDir,
    format: 'esm',
    target: 'node20',
    platform: 'node',
    skipNodeModulesBundle: true,
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
  });
  return join(outDir, `${base}.js`);
}
