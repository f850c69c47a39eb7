/**
 * The permits scenario's tables and headline lines (bench/permits), as
 * plain cells: the terminal pads them, the benchmarks page joins them with
 * pipes.
 */
import type { PermitRow, PermitSample, PermitsResult } from '../results.js';
import { formatRatio } from './format.js';

export interface PermitTable {
  readonly nodes: number;
  readonly primitive: PermitRow['primitive'];
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** What each column means, for the page's list of columns. */
export const PERMIT_COLUMNS: Readonly<Record<string, string>> = {
  'sections/s': 'critical sections per second, all processes together (reads and writes, for a read-write lock)',
  '% of hold cap': 'sections/s ÷ (holders allowed at once × 1000 ÷ the mean hold measured in the round): how busy the allowed holders were kept',
  'reqs/section': 'requests the processes\' clients sent per critical section, summed over nodes',
  'wait p99 ms': "99th percentile of an acquire's wait (of the readers', for a read-write lock)",
  'writer wait p99 ms': "99th percentile of a writer's wait",
  'most holders': 'the most holders at one moment, all processes on one time base',
  'above limit': 'sections that began while the limit was already held: must be 0',
  'beside a writer': 'sections that began beside a writer, or writers that began beside anyone: must be 0',
  '× peer': "sections/s ÷ redis-semaphore's",
  '× mutex': "sections/s ÷ quorumlock's mutex taking every section alone",
};

const nodesText = (nodes: number): string => `${nodes} node${nodes === 1 ? '' : 's'}`;
const count = (value: number): string => (Number.isFinite(value) ? value.toFixed(0) : '–');
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const percent = (value: number): string => (Number.isFinite(value) ? `${(value * 100).toFixed(0)}%` : '–');

export function rowLabel(row: PermitRow): string {
  return `${row.library} ${row.className}${row.role === 'reference' ? ' (every section alone)' : ''}`;
}

function range(row: PermitRow): string {
  const values = row.rounds.map((r) => r.sectionsPerSec).filter(Number.isFinite);
  return values.length > 1 ? `${count(Math.min(...values))}–${count(Math.max(...values))}` : '';
}

/** The row a primitive's own row is compared with: the peer's semaphore, or the mutex beside the read-write lock. */
export function comparedWith(result: PermitsResult, row: PermitRow): PermitRow | undefined {
  return result.rows.find((other) => other.nodes === row.nodes && other.primitive === row.primitive && other !== row && other.role !== 'ours');
}

export function ourRow(result: PermitsResult, nodes: number, primitive: PermitRow['primitive']): PermitRow | undefined {
  return result.rows.find((row) => row.nodes === nodes && row.primitive === primitive && row.role === 'ours');
}

export function permitTables(result: PermitsResult): PermitTable[] {
  const tables: PermitTable[] = [];
  const shape = `${result.processes} processes × ${result.waitersPerProcess} waiters, one resource, ${result.holdMs} ms holds, median of ${result.rounds} round${result.rounds === 1 ? '' : 's'}`;
  for (const nodes of [...new Set(result.rows.map((row) => row.nodes))]) {
    for (const primitive of ['semaphore', 'rwlock'] as const) {
      const rows = result.rows.filter((row) => row.nodes === nodes && row.primitive === primitive);
      if (rows.length === 0) continue;
      const ours = ourRow(result, nodes, primitive);
      const other = ours === undefined ? undefined : comparedWith(result, ours);
      const ratioOf = (row: PermitRow) => (row === ours && other !== undefined ? formatRatio(row.summary.sectionsPerSec / other.summary.sectionsPerSec) : '');
      if (primitive === 'semaphore') {
        tables.push({
          nodes,
          primitive,
          title: `${nodesText(nodes)} · semaphore across processes, limit ${result.limit} · ${shape}`,
          header: ['contender', 'sections/s', 'min–max', '% of hold cap', 'reqs/section', 'wait p99 ms', 'most holders', 'above limit', '× peer'],
          rows: rows.map((row) => cells(row, [count(row.summary.sectionsPerSec), range(row), percent(row.summary.capShare)], ratioOf(row))),
        });
      } else {
        tables.push({
          nodes,
          primitive,
          title: `${nodesText(nodes)} · read-write lock across processes, ${result.writersPerProcess} writer and ${result.waitersPerProcess - result.writersPerProcess} readers per process · ${shape}`,
          header: ['contender', 'sections/s', 'min–max', 'writes/s', 'reqs/section', 'wait p99 ms', 'writer wait p99 ms', 'most holders', 'beside a writer', '× mutex'],
          rows: rows.map((row) =>
            cells(row, [count(row.summary.sectionsPerSec), range(row), count(row.summary.writesPerSec)], ratioOf(row), fixed(row.summary.writerWaitP99Ms, 1)),
          ),
        });
      }
    }
  }
  return tables;
}

function cells(row: PermitRow, first: readonly string[], ratio: string, writerWait?: string): string[] {
  const s: PermitSample = row.summary;
  return [
    rowLabel(row),
    ...first,
    fixed(s.requestsPerSection, 1),
    fixed(s.waitP99Ms, 1),
    ...(writerWait === undefined ? [] : [writerWait]),
    String(s.maxHolders),
    String(s.violations),
    ratio,
  ];
}

export function renderPermitTables(result: PermitsResult): string {
  const parts = permitTables(result).map((table) => {
    const widths = table.header.map((h, i) => Math.max(h.length, ...table.rows.map((r) => (r[i] ?? '').length)));
    const line = (row: readonly string[]) =>
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join('  ')
        .trimEnd();
    return [table.title, line(table.header), line(widths.map((w) => '-'.repeat(w))), ...table.rows.map(line), ''].join('\n');
  });
  parts.push(timeBaseNote(result), '');
  return parts.join('\n');
}

export function timeBaseNote(result: PermitsResult): string {
  return `Holds of all processes on one time base (each worker's offset found by pings, within ${(result.timeUncertaintyMs * 1000).toFixed(0)} µs).`;
}

/** One line per node count and primitive: ours, its ratio, and its safety beside the other's. */
export function permitsHeadline(result: PermitsResult): string[] {
  const lines: string[] = [];
  for (const nodes of [...new Set(result.rows.map((row) => row.nodes))]) {
    for (const primitive of ['semaphore', 'rwlock'] as const) {
      const ours = ourRow(result, nodes, primitive);
      if (ours === undefined) continue;
      const other = comparedWith(result, ours);
      const s = ours.summary;
      const o = other?.summary;
      const where = `  ${nodesText(nodes).padEnd(7)} ${'permits'.padEnd(13)}`;
      const ratio = other === undefined ? '' : `: ${formatRatio(s.sectionsPerSec / (o?.sectionsPerSec ?? Number.NaN))} ${rowLabel(other)}`;
      if (primitive === 'semaphore') {
        lines.push(
          `${where} semaphore ${count(s.sectionsPerSec)} sections/s (${percent(s.capShare)} of hold cap) [reqs/section ${fixed(s.requestsPerSection, 1)} (peer ${fixed(o?.requestsPerSection ?? Number.NaN, 1)}), ` +
            `wait p99 ${fixed(s.waitP99Ms, 1)} ms (peer ${fixed(o?.waitP99Ms ?? Number.NaN, 1)}), above limit ${s.violations} (peer ${o?.violations ?? '–'})]${ratio}`,
        );
      } else {
        lines.push(
          `${where} read-write lock ${count(s.sectionsPerSec)} sections/s [writes/s ${count(s.writesPerSec)}, writer wait p99 ${fixed(s.writerWaitP99Ms, 1)} ms, beside a writer ${s.violations}]${ratio}`,
        );
      }
    }
  }
  return lines;
}
