import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from './cliProcess.js';

const run = promisify(execFile);
// Inside the package, so the bundle's bare imports (ioredis, commander)
// resolve from its node_modules as they do in an installed package.
const outDir = join(ROOT, 'node_modules/.cache/quorumlock-cli-build', String(process.pid));

beforeAll(async () => {
  await mkdir(outDir, { recursive: true });
  // The project's own tsup.config.ts, into a private directory (dist/ is left alone).
  await run(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js'), '--out-dir', outDir], { cwd: ROOT });
}, 120_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

it('builds the "bin" of package.json as an executable ESM file with a node shebang', async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  expect(pkg.bin?.['quorumlock']).toBe('dist/cli.js');
  const bin = join(outDir, basename(pkg.bin?.['quorumlock'] ?? ''));
  expect((await readFile(bin, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
  expect((await stat(bin)).mode & 0o111).not.toBe(0);

  const { stdout } = await run(bin, ['exec', '--help'], { cwd: ROOT });
  expect(stdout).toMatch(/Usage: quorumlock exec \[options\] RESOURCE -- COMMAND/);
  // The built file finds the package.json above it, as an installed one does.
  const { stdout: version } = await run(bin, ['--version'], { cwd: ROOT });
  expect(version.trim()).toBe((JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
});
