/**
 * `npm run test:systems`: the other systems' lock recipes against their own
 * servers (test/systems), kept out of `npm test` (vitest.config.ts excludes
 * them): they start an etcd cluster, a ZooKeeper ensemble and Postgres.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/systems/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    maxWorkers: 1,
  },
});
