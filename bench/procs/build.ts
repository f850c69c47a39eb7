/**
 * The procs worker, bundled by tsup into node_modules/.cache and run with
 * plain node. Through tsx a child took 0.9 s of CPU to start (transforming
 * TypeScript), bundled 0.4 s; with 8 children per measurement on 2 cores
 * that difference is minutes per run. Peers and ioredis stay in
 * node_modules (not bundled), loaded as users load them.
 */
import { join } from 'node:path';
import { build } from 'tsup';
import { cacheDir, ROOT } from '../library.js';

const NAME = 'procs-worker';

/** Builds bench/procs/worker.ts and returns the path of the script to run. */
export async function buildWorker(): Promise<string> {
  const outDir = cacheDir(NAME);
  await build({
    config: false,
    entry: { worker: join(ROOT, 'bench', 'procs', 'worker.ts') },
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
  return join(outDir, 'worker.js');
}
