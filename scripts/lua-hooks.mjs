// Node module hooks that load .lua files as a default-exported string, so code
// run from source (tsx: the benchmark, the CLI in tests) sees the scripts the
// way the tsup build and vitest do.
import { readFile } from 'node:fs/promises';

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.lua')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  return { format: 'module', source: `export default ${JSON.stringify(source)};`, shortCircuit: true };
}
