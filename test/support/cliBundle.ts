/**
 * Vitest global setup: bundles the CLI from source once per run, so that each
 * of the CLI tests' hundreds of child processes starts plain node on one file
 * (about 0.3 s on this machine) instead of transpiling src/ through tsx on
 * every start (about 0.7 s, most of it CPU taken from the other test files).
 * The bundle is the source as it is now: the same esbuild transform as tsup's
 * build, with the .lua files as text and the packages left external.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleSource } from '../../bench/library.js';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The CLI bundled from src/cli/main.ts for this run (test/cli/cliProcess.ts runs it). */
    quorumlockCli: string;
  }
}

const ROOT = join(import.meta.dirname, '../..');

export default async function setup(project: TestProject): Promise<() => void> {
  // Under the project, so that the bundle finds node_modules and package.json (the CLI's --version) as dist/ does.
  const parent = join(ROOT, 'node_modules/.cache/quorumlock-test-cli');
  mkdirSync(parent, { recursive: true });
  const outDir = mkdtempSync(join(parent, 'run-'));
  await bundleSource({ cli: join(ROOT, 'src/cli/main.ts') }, outDir, { sourcemap: true, clean: false });
  project.provide('quorumlockCli', join(outDir, 'cli.js'));
  return () => rmSync(outDir, { recursive: true, force: true });
}
