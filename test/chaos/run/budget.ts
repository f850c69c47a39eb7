/**
 * How long each scenario's workload runs. `npm test` gets the short default;
 * `npm run chaos` (run.mjs) sets CHAOS_BUDGET_MS for minutes in total, and
 * `npm run chaos -- --full` more.
 */
export const SHORT_BUDGET_MS = 2_000;

export function budgetMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['CHAOS_BUDGET_MS'];
  if (raw === undefined || raw === '') return SHORT_BUDGET_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 200) throw new Error(`CHAOS_BUDGET_MS must be an integer >= 200, got "${raw}"`);
  return ms;
}

/** Test timeout for a scenario whose workload runs `budget` ms plus `extraMs` of fixed steps. */
export function scenarioTimeoutMs(budget: number, extraMs = 0): number {
  return 60_000 + budget * 3 + extraMs;
}
