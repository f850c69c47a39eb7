import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  entry: { index: 'src/index.ts', testing: 'src/testing/index.ts' },
  outDir: 'dist',
  dts: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  loader: { '.lua': 'text' },
};

export default defineConfig([
  // dist/cli.js is the `quorumlock` executable (package.json "bin"); its
  // shebang comes from src/cli/main.ts. ESM only: a CommonJS copy is not needed.
  {
    ...shared,
    entry: { index: 'src/index.ts', testing: 'src/testing/index.ts', cli: 'src/cli/main.ts' },
    dts: { entry: { index: 'src/index.ts', testing: 'src/testing/index.ts' } },
    format: 'esm',
    clean: true,
  },
  {
    ...shared,
    format: 'cjs',
    outExtension: () => ({ js: '.cjs' }),
    // p-retry is ESM-only; require() of ESM is not on every Node 20, so the
    // CommonJS build carries its own copy.
    noExternal: ['p-retry', 'is-network-error'],
  },
]);
