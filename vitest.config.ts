import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configDefaults, defineConfig, type Plugin } from 'vitest/config';

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

/**
 * With QUORUMLOCK_TEST_CLIENT set (node-redis, node-redis5), test files get
 * test/support/clientSwap.ts for src/index.ts: the same suites, with the
 * lockers on that client (see there).
 */
function clientSwap(): Plugin {
  const shim = resolve('test/support/clientSwap.ts');
  const index = resolve('src/index.ts');
  return {
    name: 'quorumlock:client-swap',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (!process.env['QUORUMLOCK_TEST_CLIENT'] || process.env['QUORUMLOCK_TEST_CLIENT'] === 'ioredis') return null;
      if (importer === undefined || importer === shim || !importer.includes('/test/')) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved?.id === index ? shim : null;
    },
  };
}

/** Run after every other file, alone (see the docs examples project below). */
const DOCS_EXAMPLES = 'test/docs/examples.test.ts';

export default defineConfig({
  plugins: [luaAsText(), clientSwap()],
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file starts its own redis-server processes. Three at a time on 2 cores: most files
    // wait on servers, child processes and timers, and with two the cores sat idle 30% of a run
    // (npm test 264 s quiet with two, 211 s with three; under the loaded runs' two busy
    // processes, 385 s with two and 250-265 s with three, all green).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          // The other systems' recipes start etcd, ZooKeeper and Postgres: `npm run test:systems` (vitest.systems.config.ts).
          exclude: [...configDefaults.exclude, 'test/systems/**', DOCS_EXAMPLES],
          globalSetup: ['test/support/cliBundle.ts'],
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
        },
      },
      {
        // The docs' examples run as users run them, with the library's default 50 ms node
        // timeout. Beside the quick bench and the package build, which take both cores, a
        // node's reply can come later than that and an example fail; after the rest, alone,
        // they do not meet that load.
        extends: true,
        test: {
          name: 'docs examples',
          include: [DOCS_EXAMPLES],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
