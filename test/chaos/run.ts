/**
 * `npm run chaos [-- --full] [vitest args]`: the chaos suite with a longer
 * budget per scenario, progress on stderr, and one summary for the run:
 * printed as a table and written to .chaos/summary-<timestamp>.json.
 *
 *   npm run chaos                      15 s per scenario (a few minutes in all)
 *   npm run chaos -- --full            60 s per scenario
 *   CHAOS_BUDGET_MS=30000 npm run chaos
 *   CHAOS_SEED=123 npm run chaos -- test/chaos/network-faults.test.ts
 *
 * `npm test` runs the same files with a short budget (run/budget.ts).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAOS_DIR, formatTable, isCaught, type ScenarioSummary, timestamp } from './run/summary.js';

const ROOT = join(import.meta.dirname, '../..');
const args = process.argv.slice(2);
const full = args.includes('--full');
const vitestArgs = args.filter((a) => a !== '--full');
const budgetMs = process.env['CHAOS_BUDGET_MS'] ?? (full ? '60000' : '15000');
const stamp = timestamp();
const runDir = join(CHAOS_DIR, `run-${stamp}`);
mkdirSync(runDir, { recursive: true });

process.stderr.write(`[chaos] budget ${budgetMs} ms per scenario; results in ${runDir}\n`);
const vitest = spawn(join(ROOT, 'node_modules/.bin/vitest'), ['run', ...(vitestArgs.length > 0 ? vitestArgs : ['test/chaos'])], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, CHAOS_BUDGET_MS: budgetMs, CHAOS_RUN_DIR: runDir },
});
// Ctrl-C reaches vitest through the terminal; just wait for it.
process.on('SIGINT', () => undefined);

const code = await new Promise<number>((resolve) => vitest.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));

const scenarios: ScenarioSummary[] = [];
for (const name of readdirSync(runDir).sort()) {
  if (!name.endsWith('.json') || name.startsWith('history-')) continue;
  const fragment = JSON.parse(readFileSync(join(runDir, name), 'utf8')) as { scenarios: ScenarioSummary[] };
  scenarios.push(...fragment.scenarios);
}
const passed = code === 0 && scenarios.length > 0 && scenarios.every((s) => s.passed);
const path = join(CHAOS_DIR, `summary-${stamp}.json`);
writeFileSync(path, `${JSON.stringify({ budgetMs: Number(budgetMs), vitestExitCode: code, passed, scenarios }, null, 2)}\n`);
const safe = scenarios.filter((s) => s.kind === 'safe');
const negative = scenarios.filter((s) => s.kind === 'negative');
process.stdout.write(
  `\n[chaos] run summary (budget ${budgetMs} ms per scenario)\n${formatTable(scenarios)}\n` +
    `[chaos] ${safe.reduce((n, s) => n + s.acquisitions, 0)} acquisitions in ${safe.length} safe scenarios, ` +
    `${safe.reduce((n, s) => n + s.violations, 0)} violations; ` +
    `${negative.filter(isCaught).length}/${negative.length} negative controls caught\n` +
    `[chaos] summary written to ${path}\n[chaos] ${passed ? 'PASS' : 'FAIL'}\n`,
);
process.exit(passed ? 0 : code === 0 ? 1 : code);
