#!/usr/bin/env node
// The `quorumlock` executable (dist/cli.js). No process.exit(): the process
// ends by itself once runCli has closed every connection, which is how the
// tests check that nothing is left behind.
import { runCli } from './program.js';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
