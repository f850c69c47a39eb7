// After `tsup`: the ESM and CommonJS builds load and export the same names.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const esm = await import('../dist/index.js');
const cjs = require('../dist/index.cjs');
const names = (module) => Object.keys(module).filter((name) => name !== 'default').sort().join(',');
if (names(esm) !== names(cjs)) {
  console.error(`ESM exports ${names(esm)}\nCJS exports ${names(cjs)}`);
  process.exit(1);
}
for (const name of ['RedisLock', 'Redlock', 'Lock', 'QuorumLockError']) {
  if (typeof esm[name] !== 'function' || typeof cjs[name] !== 'function') {
    console.error(`${name} is missing from a build`);
    process.exit(1);
  }
}
console.log(`check-dist: ESM and CommonJS builds export the same ${names(esm).split(',').length} names`);
