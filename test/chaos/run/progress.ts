/**
 * Progress lines while a scenario runs (every 5 s), so a long `npm run chaos`
 * shows it is alive: acquisitions so far and faults are what matter.
 */
import type { ScenarioSummary } from './summary.js';

const EVERY_MS = 5_000;

export class Progress {
  private readonly startedAt = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly scenario: string,
    private readonly budgetMs: number,
    /** Acquisitions so far (where the scenario can count them). */
    private readonly acquisitions: () => number | undefined,
  ) {
    log(`${scenario}: running for ${(budgetMs / 1000).toFixed(1)} s`);
    this.timer = setInterval(() => this.tick(), EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  done(summary: ScenarioSummary): void {
    this.stop();
    log(
      `${this.scenario}: ${summary.acquisitions} acquisitions, ${summary.contended} contended, ` +
        `${summary.violations} violation(s) → ${summary.passed ? 'pass' : 'FAIL'}`,
    );
  }

  private tick(): void {
    const elapsed = (performance.now() - this.startedAt) / 1000;
    const grants = this.acquisitions();
    const count = grants === undefined ? '' : `, ${grants} acquisitions`;
    log(`${this.scenario}: ${elapsed.toFixed(0)}/${(this.budgetMs / 1000).toFixed(0)} s${count}`);
  }
}

/** Straight to stderr: vitest would hold console output of a running test until it ends. */
export function log(message: string): void {
  process.stderr.write(`[chaos] ${message}\n`);
}
