/**
 * The results of `npm run bench:systems` (the JSON it writes) and the
 * terminal report: one row per contender, medians over the rounds, and each
 * figure beside quorumlock's RedisLock as a ratio: on a shared machine the
 * ratios move less than the figures.
 */
import { cpus, totalmem } from 'node:os';
import { median } from '../stats.js';

export interface FaultOutcome {
  readonly what: string;
  readonly sections: number;
  readonly errors: number;
  readonly longestStallMs: number;
}

export interface ContenderResult {
  readonly id: string;
  readonly label: string;
  /** What it runs on, in words ("3 etcd members"). */
  readonly servers: string;
  /** Per round. */
  readonly uncontendedP50Ms: number[];
  readonly uncontendedP99Ms: number[];
  readonly distinctPerSec: number[];
  readonly hotPerSec: number[];
  readonly hotWaitP99Ms: number[];
  readonly hotFairness: number[];
  /** Acquires or releases that failed in the rounds (none expected). */
  errors: number;
  /** Server processes and their memory (MB, proportional set size), while this run's holders are connected. */
  processes: number;
  memoryMB: number;
  /** fsync-family calls of all its servers per acquire + release; null without strace. */
  fsyncsPerCycle: number | null;
  /** From kill -9 of the holding process to the next holder. */
  killHolderMs: number | null;
  /** null where no server fault fits (one server, nothing to fail over to). */
  fault: FaultOutcome | null;
}

export interface SystemsResult {
  readonly meta: {
    readonly startedAt: string;
    wallSeconds: number;
    readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly memoryGB: number; readonly node: string; readonly platform: string };
    readonly versions: { readonly redis: string; readonly etcd: string; readonly zookeeper: string; readonly postgres: string };
    readonly rounds: number;
    readonly settings: Readonly<Record<string, number>>;
  };
  readonly contenders: readonly ContenderResult[];
}

export function machine(): SystemsResult['meta']['machine'] {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpuModel: cores[0]?.model.trim() ?? 'unknown',
    memoryGB: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${process.platform} ${process.arch}`,
  };
}

/** The medians and single figures of one contender, as the table and the docs show them. */
export interface Row {
  readonly label: string;
  readonly servers: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly distinctPerSec: number;
  readonly hotPerSec: number;
  readonly hotWaitP99Ms: number;
  readonly fairness: number;
  readonly killHolderMs: number | null;
  readonly fault: FaultOutcome | null;
  readonly processes: number;
  readonly memoryMB: number;
  readonly fsyncsPerCycle: number | null;
  readonly errors: number;
}

export function rowsOf(result: SystemsResult): Row[] {
  return result.contenders.map((c) => ({
    label: c.label,
    servers: c.servers,
    p50Ms: median(c.uncontendedP50Ms),
    p99Ms: median(c.uncontendedP99Ms),
    distinctPerSec: median(c.distinctPerSec),
    hotPerSec: median(c.hotPerSec),
    hotWaitP99Ms: median(c.hotWaitP99Ms),
    fairness: median(c.hotFairness),
    killHolderMs: c.killHolderMs,
    fault: c.fault,
    processes: c.processes,
    memoryMB: c.memoryMB,
    fsyncsPerCycle: c.fsyncsPerCycle,
    errors: c.errors,
  }));
}

export const ms = (value: number | null): string => (value === null || !Number.isFinite(value) ? '–' : value < 10 ? value.toFixed(2) : value.toFixed(0));
export const count = (value: number | null): string => (value === null || !Number.isFinite(value) ? '–' : value >= 100 ? value.toFixed(0) : value.toFixed(1));
export const times = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 0)}×` : '–');

export function faultText(fault: FaultOutcome | null): string {
  return fault === null ? 'n/a' : `${fault.errors} errors, ${ms(fault.longestStallMs)} ms stall (${fault.what})`;
}

export function renderReport(result: SystemsResult): string {
  const rows = rowsOf(result);
  const base = rows[0]!;
  const { meta } = result;
  const header = ['contender', 'p50 ms', 'p99 ms', '64 keys cs/s', 'hot cs/s', 'wait p99 ms', 'fairness', 'kill -9 → next ms', 'procs', 'PSS MB', 'fsyncs/cycle'];
  const table = rows.map((r) => [
    r.label,
    ms(r.p50Ms),
    ms(r.p99Ms),
    count(r.distinctPerSec),
    count(r.hotPerSec),
    ms(r.hotWaitP99Ms),
    r.fairness.toFixed(2),
    ms(r.killHolderMs),
    String(r.processes),
    r.memoryMB.toFixed(0),
    r.fsyncsPerCycle === null ? '–' : r.fsyncsPerCycle.toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const ratioHeader = ['contender', 'p50 ×', '64 keys cs/s ×', 'hot cs/s ×'];
  const ratios = rows.map((r) => [r.label, times(r.p50Ms / base.p50Ms), times(r.distinctPerSec / base.distinctPerSec), times(r.hotPerSec / base.hotPerSec)]);
  const ratioWidths = ratioHeader.map((h, i) => Math.max(h.length, ...ratios.map((row) => row[i]!.length)));
  const ratioLine = (cells: readonly string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(ratioWidths[i]!) : cell.padStart(ratioWidths[i]!))).join('  ');
  return [
    `bench:systems · ${meta.startedAt} · ${meta.machine.cpus} × ${meta.machine.cpuModel}, ${meta.machine.memoryGB} GB · Node ${meta.machine.node} · ` +
      `Redis ${meta.versions.redis}, etcd ${meta.versions.etcd}, ZooKeeper ${meta.versions.zookeeper}, Postgres ${meta.versions.postgres}`,
    `medians of ${meta.rounds} interleaved rounds; hot key: ${meta.settings['hotProcesses']} processes × ${meta.settings['hotWaiters']} waiters, ${meta.settings['holdMs']} ms hold; ` +
      `a dead holder's lock lasts ${(meta.settings['livenessMs'] ?? 0) / 1000} s (TTL, lease, session)`,
    '',
    line(header),
    line(header.map((_, i) => '-'.repeat(widths[i]!))),
    ...table.map(line),
    '',
    `against ${base.label} (p50: above 1× = slower; cs/s: above 1× = more sections)`,
    ratioLine(ratioHeader),
    ...ratios.map(ratioLine),
    '',
    'server killed mid-run (8 holders on their own locks):',
    ...rows.map((r) => `  ${r.label.padEnd(widths[0]!)}  ${faultText(r.fault)}`),
    ...(rows.some((r) => r.errors > 0) ? ['', 'errors in the rounds:', ...rows.filter((r) => r.errors > 0).map((r) => `  ${r.label}: ${r.errors}`)] : []),
    '',
    `wall time ${meta.wallSeconds.toFixed(0)} s`,
  ].join('\n');
}
