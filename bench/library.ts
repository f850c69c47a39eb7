/**
 * quorumlock as users get it: src/ bundled by tsup (the package's own build
 * tool, here without type declarations) into node_modules/.cache, then
 * imported. Running src/ through tsx instead would measure tsx's transform
 * too: it keeps function names by wrapping every closure in a helper call,
 * which adds several µs per lock cycle that the published package does not
 * have. The build takes well under a second and always reflects the current
 * source.
 *
 * Each run builds into a directory of its own, removed when it ends: the
 * procs scenario's child processes import the build minutes after it was
 * made, and a shared directory was rebuilt under them by another run (a
 * smoke test in another checkout's session) from other source, mid-run.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'tsup';
import { pidExists } from '../test/support/processRegistry.js';

export type Library = typeof import('../src/index.js');

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = join(ROOT, 'node_modules', '.cache', 'quorumlock-bench', 'runs');
const OURS = join(RUNS, String(process.pid));

/** Where this run keeps its build called `name`. */
export function cacheDir(name: string): string {
  return join(OURS, name);
}

/** This run's builds, when it is over. */
export async function removeBuilds(): Promise<void> {
  await rm(OURS, { recursive: true, force: true });
}

/** Builds of runs that were killed before they could remove theirs (their process is gone). */
export async function removeStaleBuilds(): Promise<void> {
  const entries = await readdir(RUNS).catch(() => [] as string[]);
  await Promise.all(
    entries.filter((entry) => !pidExists(Number(entry))).map((entry) => rm(join(RUNS, entry), { recursive: true, force: true })),
  );
}

/** file: URL of the build `name` made by buildLibrary(), for processes that import it themselves. */
export function libraryUrl(name = 'current'): string {
  return pathToFileURL(join(cacheDir(name), 'index.js')).href;
}

/**
 * Bundles `entry` as tsup builds the package (ESM for Node 20, the .lua files
 * as text, the packages left external), without type declarations.
 */
export async function bundleSource(entry: Record<string, string>, outDir: string, options: { sourcemap: boolean; clean: boolean }): Promise<void> {
  await build({
    config: false,
    entry,
    outDir,
    format: 'esm',
    target: 'node20',
    platform: 'node',
    loader: { '.lua': 'text' },
    dts: false,
    silent: true,
    ...options,
  });
}

/** Builds `<checkout>/src/index.ts` (default: this checkout) and imports it. */
export async function buildLibrary(checkout: string = ROOT, name = 'current'): Promise<Library> {
  const outDir = cacheDir(name);
  await mkdir(outDir, { recursive: true });
  await bundleSource({ index: join(resolve(checkout), 'src', 'index.ts') }, outDir, { sourcemap: false, clean: true });
  // A fresh URL per build, so a second build in one process is not served from the module cache.
  const url = `${libraryUrl(name)}?t=${Date.now()}`;
  return (await import(url)) as Library;
}
