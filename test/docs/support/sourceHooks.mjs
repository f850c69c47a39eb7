// Module hooks for a docs example run from source: 'quorumlock' and
// 'quorumlock/testing' resolve to src/, as the type check maps them, and .lua
// files load as the build loads them (scripts/lua-hooks.mjs).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

export { load } from '../../../scripts/lua-hooks.mjs';

const root = join(import.meta.dirname, '../../..');
const ENTRIES = {
  quorumlock: pathToFileURL(join(root, 'src/index.ts')).href,
  'quorumlock/testing': pathToFileURL(join(root, 'src/testing/index.ts')).href,
};

export async function resolve(specifier, context, nextResolve) {
  const entry = ENTRIES[specifier];
  return nextResolve(entry ?? specifier, context);
}
