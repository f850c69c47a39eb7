/**
 * The frame of a chaos test file: one ChaosCluster for the file (started in
 * beforeAll, stopped in afterAll even when tests fail), one ChaosReport
 * printed and written at the end, and the assertions every safe scenario
 * makes: no finding, no unexpected error, some acquisitions.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { formatFindings } from '../check/report.js';
import type { StartOptions } from '../../support/harness.js';
import { ChaosCluster } from './cluster.js';
import { runScenario, type ScenarioOutcome, type ScenarioSpec } from './scenario.js';
import { ChaosReport } from './summary.js';

export interface ChaosFile {
  readonly report: ChaosReport;
  cluster(): ChaosCluster;
  /** Runs a safe scenario and asserts it found nothing. */
  expectSafe(spec: ScenarioSpec): Promise<ScenarioOutcome>;
}

export function chaosFile(file: string, nodes = 5, options: StartOptions = {}): ChaosFile {
  const report = new ChaosReport(file);
  let cluster: ChaosCluster | undefined;
  beforeAll(async () => {
    cluster = await ChaosCluster.start(nodes, options);
  });
  afterAll(async () => {
    report.finish();
    await cluster?.stop();
  });
  const current = (): ChaosCluster => {
    if (cluster === undefined) throw new Error('chaosFile: the cluster is not started');
    return cluster;
  };
  return {
    report,
    cluster: current,
    async expectSafe(spec) {
      const outcome = await runScenario(current(), spec);
      report.add(outcome.summary);
      if (!outcome.summary.passed) console.error(`[chaos] history saved to ${report.saveHistory(spec.name, outcome.history)}`);
      expect(formatFindings(outcome.check, outcome.history)).toBe('');
      expect(outcome.summary.unexpectedErrors).toEqual([]);
      expect(outcome.summary.acquisitions).toBeGreaterThan(0);
      return outcome;
    },
  };
}
