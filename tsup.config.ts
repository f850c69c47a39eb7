import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  entry: { index: 'src/index.ts' },
  outDir: 'dist',
  dts: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  loader: { '.lua': 'text' },
};

export default defineConfig([
  { ...shared, format: 'esm', clean: true },
  {
    ...shared,
    format: 'cjs',
    outExtension: () => ({ js: '.cjs' }),
    // p-retry is ESM-only; require() of ESM is not on every Node 20, so the
    // CommonJS build carries its own copy.
    noExternal: ['p-retry', 'is-network-error'],
  },
]);
