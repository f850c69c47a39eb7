/**
 * `npm run soak [-- CYCLES [MINUTES]]` (default 1,000,000 cycles, no time limit): runs test/soak/soak.ts in a child process (with
 * --expose-gc), passes its progress through, prints its report, and fails
 * if the report lists a failure or the child does not exit by itself within
 * EXIT_WITHIN_MS of reporting (a timer or socket left behind keeps it alive).
 * Takes minutes; not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const EXIT_WITHIN_MS = 10_000;
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const cycles = process.argv[2] ?? '1000000';
const minutes = process.argv[3] ?? 'Infinity';

const started = Date.now();
const child = spawn(
  process.execPath,
  ['--expose-gc', '--import', 'tsx', '--import', './scripts/register-lua.mjs', join(here, 'soak.ts'), cycles, minutes],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
);
let stdout = '';
let reportedAt: number | undefined;
let exitTimer: NodeJS.Timeout | undefined;
child.stdout.on('data', (chunk: Buffer) => {
  stdout += chunk.toString('utf8');
  if (reportedAt === undefined && stdout.includes('\n')) {
    reportedAt = Date.now();
    exitTimer = setTimeout(() => {
      process.stderr.write(`soak: FAILED, the soak process did not exit by itself within ${EXIT_WITHIN_MS / 1000} s of its report\n`);
      child.kill('SIGKILL');
    }, EXIT_WITHIN_MS);
  }
});
child.on('exit', (code, signal) => {
  clearTimeout(exitTimer);
  const line = stdout.trim().split('\n').pop();
  if (line) process.stdout.write(`${JSON.stringify(JSON.parse(line), null, 2)}\n`);
  const exitedInMs = reportedAt === undefined ? undefined : Date.now() - reportedAt;
  process.stdout.write(
    `soak: ${code === 0 ? 'PASSED' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s` +
      `${exitedInMs === undefined ? '' : `; the process exited ${exitedInMs} ms after its report`}` +
      `${signal ? ` (killed: ${signal})` : ''}\n`,
  );
  process.exitCode = code === 0 && signal === null ? 0 : 1;
});
