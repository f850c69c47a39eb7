import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The folders of src/ in layers: a module imports from its own folder or from
// a lower layer, never sideways or up. Errors and the types every layer
// passes around live in shared/, so node/, wakeup/ and diagnostics/ need
// nothing from lock/; and one primitive's folder never reaches into another's.

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

const LAYERS: readonly (readonly string[])[] = [
  ['clock', 'shared'],
  ['scripts'],
  ['node'],
  ['diagnostics', 'wakeup', 'testing'],
  ['lock'],
  ['redlock'],
  ['single', 'semaphore', 'rwlock'],
  ['cli'],
];

function layerOf(folder: string): number {
  const layer = LAYERS.findIndex((folders) => folders.includes(folder));
  if (layer === -1) throw new Error(`src/${folder} is in no layer: add it to LAYERS`);
  return layer;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every cross-folder import in src/ as "from -> to" (src/index.ts, the public exports, is above all). */
function crossFolderImports(): { from: string; to: string; file: string }[] {
  const found: { from: string; to: string; file: string }[] = [];
  for (const file of sourceFiles(src)) {
    const from = relative(src, file).split('/')[0] ?? '';
    if (from === 'index.ts') continue;
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = relative(src, resolve(dirname(file), match[1] ?? ''));
      const to = target.split('/')[0] ?? '';
      if (to !== from) found.push({ from, to, file: relative(src, file) });
    }
  }
  return found;
}

describe('src/ layers', () => {
  it('imports only from lower layers', () => {
    const upward = crossFolderImports()
      .filter(({ from, to }) => layerOf(to) >= layerOf(from))
      .map(({ from, to, file }) => `${file}: ${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it('finds the imports it checks (node/ imports shared/ and scripts/)', () => {
    const targets = new Set(crossFolderImports().filter(({ from }) => from === 'node').map(({ to }) => to));
    expect(targets).toContain('shared');
    expect(targets).toContain('scripts');
  });
});
