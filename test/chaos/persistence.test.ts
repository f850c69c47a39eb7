/**
 * Safe scenario with immediate restarts: nodes run with appendfsync always,
 * so a key is on disk before its acquire is answered, and a node killed with
 * -9 may come back at once (the Redlock spec's alternative to delayed
 * restarts). Up to a majority at a time. No overlap allowed.
 */
import { describe, it } from 'vitest';
import { budgetMs, scenarioTimeoutMs } from './run/budget.js';
import { chaosFile } from './run/chaosFile.js';
import { crashAndAofRestart } from './run/nemeses.js';

const budget = budgetMs();
const { expectSafe } = chaosFile(import.meta.filename, 5, { persistence: 'appendfsync-always' });

describe('chaos: restarts from an fsynced AOF', () => {
  it(
    'no two holders overlap while up to 3 nodes are killed with -9 and restarted at once from an appendfsync-always AOF',
    () =>
      expectSafe({
        name: 'kill-aof-restart',
        rules: [3, 6],
        budgetMs: budget,
        nemeses: [crashAndAofRestart(3)],
        locker: { fencing: true },
      }),
    scenarioTimeoutMs(budget),
  );
});
