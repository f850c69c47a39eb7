import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * quorumlock's version, from the package.json above this file: dist/cli.js
 * when installed, src/cli/ in a checkout.
 */
export function packageVersion(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'quorumlock' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here (or not ours): keep looking upwards.
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
