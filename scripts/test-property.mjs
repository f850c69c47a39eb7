#!/usr/bin/env node
/**
 * npm run test:property -- [--runs N] [--seed S] [--path P] [--replay-path R] [--verbose] [vitest args...]
 *
 * Runs the fast-check properties of test/property. vitest rejects flags it
 * does not know, so the fast-check ones become environment variables that
 * test/property/fcConfig.ts reads (FC_RUNS, FC_SEED, FC_PATH, FC_REPLAY_PATH,
 * FC_VERBOSE); every other argument goes to vitest as is (a file, -t "name").
 */
import { spawnSync } from 'node:child_process';

const FLAGS = { '--runs': 'FC_RUNS', '--seed': 'FC_SEED', '--path': 'FC_PATH', '--replay-path': 'FC_REPLAY_PATH' };

const env = { ...process.env };
const passThrough = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const [flag, inline] = arg.split(/=(.*)/s, 2);
  if (flag in FLAGS) {
    const value = inline ?? args[++i];
    if (value === undefined) {
      console.error(`test:property: ${flag} needs a value`);
      process.exit(2);
    }
    env[FLAGS[flag]] = value;
  } else if (arg === '--verbose') {
    env.FC_VERBOSE = '1';
  } else {
    passThrough.push(arg);
  }
}

// Without a file of its own, run every property file.
const targets = passThrough.some((arg) => arg.startsWith('test/')) ? [] : ['test/property'];
// Larger FC_RUNS take longer than vitest's default test timeout: each test scales its own
// (fcConfig.timeoutFor), and hooks that start redis-server keep theirs.
const result = spawnSync('npx', ['vitest', 'run', ...targets, ...passThrough], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
