import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm run docs:api` (TypeDoc) is the check that every public export is
// documented: it fails on any warning. These tests keep that check strict, so
// that turning a validation off or dropping an entry point shows up here
// instead of as a reference that quietly stops covering the API.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const readJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;

const typedoc = readJson('typedoc.json');
const pkg = readJson('package.json') as { scripts: Record<string, string>; exports: Record<string, unknown> };

describe('the API reference configuration', () => {
  it('fails the build on an undocumented export, an unexported type in a signature or a broken link', () => {
    expect(typedoc['validation']).toEqual({ notExported: true, invalidLink: true, notDocumented: true });
    expect(typedoc['treatWarningsAsErrors']).toBe(true);
    expect(typedoc['treatValidationWarningsAsErrors']).toBe(true);
  });

  it('covers every entry of the package, quorumlock and quorumlock/testing', () => {
    const entries = Object.keys(pkg.exports).filter((entry) => entry !== './package.json');
    expect(entries.sort()).toEqual(['.', './testing']);
    expect(typedoc['entryPoints']).toEqual(['src/index.ts', 'src/testing/index.ts']);
  });

  it('is built by npm run docs:api into the site under docs/api, which git ignores', () => {
    expect(pkg.scripts['docs:api']).toBe('typedoc');
    expect(typedoc['out']).toBe('docs/api');
    const ignored = readFileSync(join(root, '.gitignore'), 'utf8').split('\n').map((line) => line.trim());
    expect(ignored).toContain('docs/api/');
  });
});
