#!/usr/bin/env node
// Runs every chaos negative control N times (issue 26: each must catch its
// violation in 50 of 50 runs) and prints, per control, how many runs caught it.
// Usage: node scripts/controls-repeat.mjs N [--load]   (--load: beside two busy processes)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const runs = Number(process.argv[2]);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: node scripts/controls-repeat.mjs N [--load]');
  process.exit(2);
}
const FILES = [
  'test/chaos/negative-controls.test.ts',
  'test/chaos/wait-line.test.ts',
  'test/chaos/failover-single.test.ts',
  'test/chaos/failover-redlock.test.ts',
  'test/chaos/semaphore-rwlock.test.ts',
];
const CONTROLS = 'negative control|reports an overlap|reports a figure';
const busy = process.argv.includes('--load') ? [1, 2].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })) : [];
const stopBusy = () => busy.forEach((child) => child.kill());
// The busy children keep this process alive: they are stopped when it is done
// (below) or interrupted, never left spinning (they once outlived a finished run).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopBusy();
    process.exit(130);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'controls-'));
const caught = new Map();
for (let i = 1; i <= runs; i++) {
  const out = join(dir, `run-${i}.json`);
  const started = Date.now();
  spawnSync('npx', ['vitest', 'run', ...FILES, '-t', CONTROLS, '--reporter=json', `--outputFile=${out}`], { stdio: 'ignore' });
  let report;
  try {
    report = JSON.parse(readFileSync(out, 'utf8'));
  } catch {
    console.log(`run ${i}: no report (vitest did not finish)`);
    continue;
  }
  const missed = [];
  for (const file of report.testResults) {
    for (const test of file.assertionResults) {
      if (test.status === 'skipped' || test.status === 'pending') continue;
      const tally = caught.get(test.fullName) ?? { caught: 0, runs: 0 };
      tally.runs++;
      if (test.status === 'passed') tally.caught++;
      else missed.push(test.fullName);
      caught.set(test.fullName, tally);
    }
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  console.log(`run ${i}: ${caught.size} controls, ${missed.length} missed, ${Math.round((Date.now() - started) / 1000)} s, load ${load}${missed.length ? `\n  missed: ${missed.join('\n  missed: ')}` : ''}`);
}
console.log('\ncaught / runs  control');
for (const [name, { caught: c, runs: r }] of caught) console.log(`${String(c).padStart(3)} / ${String(r).padEnd(4)}  ${name}`);
const all = [...caught.values()].every((t) => t.caught === runs && t.runs === runs);
console.log(all ? `every control caught in ${runs} of ${runs} runs` : 'NOT every control caught in every run');
process.exitCode = all ? 0 : 1;
stopBusy();
