/**
 * Per-scenario results: a table printed at the end of each chaos test file,
 * and JSON written under .chaos/ (the path is printed). `npm run chaos`
 * (run.mjs) points every file at one run directory and merges them into
 * .chaos/summary-<timestamp>.json with one table for the whole run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { CheckResult } from '../check/checker.js';
import { formatFindings } from '../check/report.js';
import { countFaults } from '../history/FaultLog.js';
import type { History } from '../history/types.js';

export const CHAOS_DIR = join(import.meta.dirname, '../../../.chaos');

export type ScenarioKind = 'safe' | 'negative';

/** The wait-line scenarios' liveness figure (check/liveness.ts). */
export interface LivenessSummary {
  /** Longest time the resource sat free while live waiters wanted it, all nodes up and settled. */
  readonly longestMs: number;
  /** The design's bound: lease + retry.maxDelayMs. */
  readonly boundMs: number;
  /** What a safe scenario allows: the bound plus slack for a busy machine (longer is a failure). */
  readonly limitMs: number;
  /** Time the figure covers (the run minus node faults and their settling). */
  readonly coveredMs: number;
  /** Waiter processes lost (killed, SIGSTOPped) while they waited: each restarts a stretch's measurement. */
  readonly losses: number;
  /** Time worker processes could not run on a busy machine (summed): their waiters were not live then. */
  readonly stalledMs?: number;
  /** With node faults: the same over all time a quorum of nodes was up, node faults' own effects included. */
  readonly quorumUpLongestMs?: number;
  /** What that one may reach (longer would be a hang). */
  readonly quorumUpLimitMs?: number;
}

export interface ScenarioSummary {
  readonly scenario: string;
  readonly kind: ScenarioKind;
  /** Design rules (design.md) the scenario exercises. */
  readonly rules: readonly number[];
  readonly seed?: number;
  readonly budgetMs?: number;
  /** Lockers, and the processes they ran in. */
  readonly clients: number;
  readonly processes: number;
  /** Faults injected, by kind. */
  readonly faults: Readonly<Record<string, number>>;
  /** Granted acquire rounds (= holders). */
  readonly acquisitions: number;
  /** Acquire rounds refused because the resource was held elsewhere. */
  readonly contended: number;
  /** Acquire rounds without a quorum of reachable nodes. */
  readonly unreachable: number;
  /** Acquire rounds whose validity was used up. */
  readonly exhausted: number;
  readonly extends: number;
  readonly releases: number;
  /** Holds re-entered on held locks, nested and by value (each counted as part of its outer hold). */
  readonly reentries?: { readonly nested: number; readonly byValue: number };
  /** Overlapping holder windows. */
  readonly violations: number;
  readonly tokenRegressions: number;
  readonly tokensChecked: number;
  readonly quorumBreaches: number;
  readonly unexpectedErrors: readonly string[];
  /** Multi-process scenarios: worst disagreement of a worker's time base with the parent's. */
  readonly timeBaseDeviationMs?: number;
  readonly liveness?: LivenessSummary;
  readonly passed: boolean;
  /** The first findings, formatted (for a negative control: the overlap it caught). */
  readonly findings?: string;
}

export interface SummaryInput {
  readonly scenario: string;
  readonly kind: ScenarioKind;
  readonly rules: readonly number[];
  readonly seed?: number;
  readonly budgetMs?: number;
  readonly clients: number;
  readonly processes?: number;
  readonly history: History;
  readonly check: CheckResult;
  readonly unexpectedErrors?: readonly string[];
  /** A safe scenario with fewer acquisitions proves nothing and fails. */
  readonly minAcquisitions?: number;
  readonly timeBaseDeviationMs?: number;
  readonly liveness?: LivenessSummary;
}

export function summarize(input: SummaryInput): ScenarioSummary {
  const { history, check } = input;
  const acquires = history.ops.filter((op) => op.kind === 'acquire');
  const count = (result: string): number => acquires.filter((op) => op.result === result).length;
  const unexpectedErrors = input.unexpectedErrors ?? [];
  const acquisitions = count('ok');
  const clean = check.tokenRegressions.length === 0 && check.quorumBreaches.length === 0 && unexpectedErrors.length === 0;
  const passed =
    input.kind === 'safe'
      ? clean &&
        check.overlaps.length === 0 &&
        acquisitions >= (input.minAcquisitions ?? 1) &&
        (input.liveness === undefined || withinLimits(input.liveness))
      : clean && (input.liveness === undefined ? check.overlaps.length > 0 : check.overlaps.length === 0 && !withinLimits(input.liveness));
  const findings = formatFindings(check, history, 2);
  return {
    scenario: input.scenario,
    kind: input.kind,
    rules: input.rules,
    ...(input.seed === undefined ? {} : { seed: input.seed }),
    ...(input.budgetMs === undefined ? {} : { budgetMs: input.budgetMs }),
    clients: input.clients,
    processes: input.processes ?? 1,
    faults: countFaults(history.faults),
    acquisitions,
    contended: count('held'),
    unreachable: count('unreachable'),
    exhausted: count('exhausted'),
    extends: history.ops.filter((op) => op.kind === 'extend' && op.result === 'ok').length,
    releases: history.ops.filter((op) => op.kind === 'release').length,
    reentries: {
      nested: (history.reentries ?? []).filter((r) => !r.byValue).length,
      byValue: (history.reentries ?? []).filter((r) => r.byValue).length,
    },
    violations: check.overlaps.length,
    tokenRegressions: check.tokenRegressions.length,
    tokensChecked: check.tokensChecked,
    quorumBreaches: check.quorumBreaches.length,
    unexpectedErrors: unexpectedErrors.slice(0, 10),
    ...(input.timeBaseDeviationMs === undefined ? {} : { timeBaseDeviationMs: input.timeBaseDeviationMs }),
    ...(input.liveness === undefined ? {} : { liveness: input.liveness }),
    passed,
    ...(findings === '' ? {} : { findings }),
  };
}

/** Summaries saved before re-entries were counted have none. */
function formatReentries(rows: readonly ScenarioSummary[]): string {
  const nested = rows.reduce((n, r) => n + (r.reentries?.nested ?? 0), 0);
  const byValue = rows.reduce((n, r) => n + (r.reentries?.byValue ?? 0), 0);
  return `${nested} / ${byValue}`;
}

/** A fixed-width table of summaries (also used by run.mjs on the merged JSON). */
export function formatTable(rows: readonly ScenarioSummary[]): string {
  const header = ['scenario', 'kind', 'faults injected', 'acquired', 're-entered (nested/by value)', 'contended', 'unreach.', 'violations', 'liveness', 'errors', 'result'];
  const body = rows.map((r) => [
    r.scenario,
    r.kind,
    Object.entries(r.faults)
      .map(([kind, n]) => `${kind} ×${n}`)
      .join(', ') || 'none',
    String(r.acquisitions),
    formatReentries([r]),
    String(r.contended),
    String(r.unreachable),
    r.kind === 'negative' && r.liveness === undefined ? `${r.violations} (caught: ${isCaught(r) ? 'yes' : 'NO'})` : String(r.violations),
    r.kind === 'negative' && r.liveness !== undefined ? `${formatLiveness(r.liveness)} (caught: ${isCaught(r) ? 'yes' : 'NO'})` : formatLiveness(r.liveness),
    String(r.unexpectedErrors.length + r.tokenRegressions + r.quorumBreaches),
    r.passed ? 'pass' : 'FAIL',
  ]);
  const totals = rows.filter((r) => r.kind === 'safe');
  body.push([
    `total (safe scenarios: ${totals.length})`,
    '',
    '',
    String(totals.reduce((n, r) => n + r.acquisitions, 0)),
    formatReentries(totals),
    String(totals.reduce((n, r) => n + r.contended, 0)),
    String(totals.reduce((n, r) => n + r.unreachable, 0)),
    String(totals.reduce((n, r) => n + r.violations, 0)),
    '',
    String(rows.reduce((n, r) => n + r.unexpectedErrors.length + r.tokenRegressions + r.quorumBreaches, 0)),
    rows.every((r) => r.passed) ? 'pass' : 'FAIL',
  ]);
  const widths = header.map((h, i) => Math.min(i === 2 ? 110 : 60, Math.max(h.length, ...body.map((row) => (row[i] ?? '').length))));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (c.length > (widths[i] ?? 0) ? `${c.slice(0, (widths[i] ?? 1) - 1)}…` : c.padEnd(widths[i] ?? 0))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

/**
 * Whether a negative control's checker found what it broke: an overlap, or
 * for a control that breaks liveness (it has a liveness figure) the figure
 * beyond its limit.
 */
export function isCaught(summary: ScenarioSummary): boolean {
  return summary.liveness === undefined ? summary.violations > 0 : !withinLimits(summary.liveness);
}

function withinLimits(liveness: LivenessSummary): boolean {
  const quorumUp = liveness.quorumUpLongestMs ?? 0;
  return liveness.longestMs <= liveness.limitMs && quorumUp <= (liveness.quorumUpLimitMs ?? Infinity);
}

/** e.g. `412 ms (bound 1000; quorum up: 1180)`; '-' for scenarios that do not measure it. */
export function formatLiveness(liveness: LivenessSummary | undefined): string {
  if (liveness === undefined) return '-';
  const quorumUp = liveness.quorumUpLongestMs === undefined ? '' : `; quorum up: ${Math.round(liveness.quorumUpLongestMs)}`;
  return `${Math.round(liveness.longestMs)} ms (bound ${liveness.boundMs}, limit ${liveness.limitMs}${quorumUp})`;
}

/** Collects one test file's summaries; finish() prints the table and writes the JSON. */
export class ChaosReport {
  private readonly rows: ScenarioSummary[] = [];

  constructor(private readonly file: string) {}

  add(summary: ScenarioSummary): void {
    this.rows.push(summary);
  }

  /** Writes the full history of a scenario (for a failure, or a negative control) and returns its path. */
  saveHistory(scenario: string, history: History): string {
    const dir = process.env['CHAOS_RUN_DIR'] ?? CHAOS_DIR;
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `history-${slug(scenario)}-${timestamp()}.json`);
    writeFileSync(path, JSON.stringify(history));
    return path;
  }

  finish(): string | undefined {
    if (this.rows.length === 0) return undefined;
    const runDir = process.env['CHAOS_RUN_DIR'];
    const name = basename(this.file).replace(/\.test\.ts$/, '');
    const path = runDir === undefined ? join(CHAOS_DIR, `summary-${timestamp()}-${name}.json`) : join(runDir, `${name}.json`);
    mkdirSync(runDir ?? CHAOS_DIR, { recursive: true });
    writeFileSync(path, `${JSON.stringify({ file: this.file, scenarios: this.rows }, null, 2)}\n`);
    console.log(`\n[chaos] ${name}\n${formatTable(this.rows)}\n[chaos] summary written to ${path}\n`);
    return path;
  }
}

export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}
