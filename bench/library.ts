/**
 * quorumlock as users get it: src/ bundled by tsup (the package's own build
 * tool, here without type declarations) into node_modules/.cache, then
 * imported. Running src/ through tsx instead would measure tsx's transform
 * too: it keeps function names by wrapping every closure in a helper call,
 * which adds several µs per lock cycle that the published package does not
 * have. The build takes well under a second and always reflects the current
 * source.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'tsup';

export type Library = typeof import('../src/index.js');

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'quorumlock-bench');

/** Builds `<checkout>/src/index.ts` (default: this checkout) and imports it. */
export async function buildLibrary(checkout: string = ROOT, name = 'current'): Promise<Library> {
  const outDir = join(CACHE, name);
  await mkdir(outDir, { recursive: true });
  await build({
    config: false,
    entry: { index: join(resolve(checkout), 'src', 'index.ts') },
    outDir,
    format: 'esm',
    target: 'node20',
    platform: 'node',
    loader: { '.lua': 'text' },
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
  });
  // A fresh URL per build, so a second build in one process is not served from the module cache.
  const url = `${pathToFileURL(join(outDir, 'index.js')).href}?t=${Date.now()}`;
  return (await import(url)) as Library;
}
