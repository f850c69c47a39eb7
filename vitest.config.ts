import { readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vitest/config';

/** Loads .lua files as strings, as tsup's text loader does for the build. */
function luaAsText(): Plugin {
  return {
    name: 'quorumlock:lua-as-text',
    load(id) {
      if (!id.endsWith('.lua')) return null;
      return `export default ${JSON.stringify(readFileSync(id, 'utf8'))};`;
    },
  };
}

export default defineConfig({
  plugins: [luaAsText()],
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file starts its own redis-server processes; two at a time suit 2 cores.
    maxWorkers: 2,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
});
