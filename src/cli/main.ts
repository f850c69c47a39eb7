#!/usr/bin/env node
// The `quorumlock` executable (dist/cli.js). No process.exit(): the process
// ends by itself once runCli has closed every connection, which is how the
// tests check that nothing is left behind.
import { ExitCode } from './exitCodes.js';

// Loaded, not imported: the command line talks to Redis through ioredis, an
// optional peer the library itself does without, and its absence must be
// said plainly rather than as a module resolution stack trace.
import('./program.js').then(
  ({ runCli }) =>
    runCli(process.argv.slice(2)).then((code) => {
      process.exitCode = code;
    }),
  (error: unknown) => {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes("'ioredis'")) {
      process.stderr.write('quorumlock: the command line needs the ioredis package: npm install ioredis\n');
      process.exitCode = ExitCode.UNAVAILABLE;
      return;
    }
    throw error;
  },
);
