/**
 * An SVG of a bench:systems run, written as text in the style of the main
 * bench's chart: one panel per figure, one horizontal bar per contender, log
 * scale (the systems differ by orders of magnitude), the value at the bar's end.
 */
import { ms, count, rowsOf, type Row, type SystemsResult } from './results.js';

const WIDTH = 1000;
const LEFT = 270;
const RIGHT = 90;
const BAR = 18;
const GAP = 6;
const PANEL_TOP = 34;
const PANEL_BOTTOM = 20;
const COLORS = ['#1f5fbf', '#4a90d9', '#17becf', '#d62728', '#2f9e55', '#9467bd'];

interface Panel {
  readonly title: string;
  readonly value: (row: Row) => number | null;
  readonly format: (value: number) => string;
}

const PANELS: readonly Panel[] = [
  { title: 'uncontended acquire + release, p50 (ms, lower is better)', value: (r) => r.p50Ms, format: ms },
  { title: '64 workers on distinct locks: critical sections/s (higher is better)', value: (r) => r.distinctPerSec, format: count },
  { title: 'one hot lock, 8 processes × 8 waiters, 1 ms hold: critical sections/s (higher is better)', value: (r) => r.hotPerSec, format: count },
  { title: 'kill -9 of the holder → next holder (ms, lower is better)', value: (r) => r.killHolderMs, format: ms },
];

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderChart(result: SystemsResult): string {
  const rows = rowsOf(result);
  const panelHeight = PANEL_TOP + rows.length * (BAR + GAP) + PANEL_BOTTOM;
  const top = 80;
  const height = top + PANELS.length * panelHeight + 20;
  const { meta } = result;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="20" y="28" font-size="18" font-weight="bold">quorumlock beside etcd, ZooKeeper and Postgres locks, in one run</text>`,
    `<text x="20" y="48" fill="#444">Log scale. Each system as shipped: etcd and ZooKeeper fsync every write, Redis without persistence, Postgres advisory locks write no WAL.</text>`,
    `<text x="20" y="66" fill="#666" font-size="11">${escape(`${meta.startedAt} · ${meta.machine.cpus} × ${meta.machine.cpuModel} · Node ${meta.machine.node} · medians of ${meta.rounds} interleaved rounds · shared machine: compare side by side`)}</text>`,
  ];
  for (const [index, panel] of PANELS.entries()) {
    const y0 = top + index * panelHeight;
    out.push(`<text x="20" y="${y0 + 20}" font-size="13" font-weight="bold">${escape(panel.title)}</text>`);
    const values = rows.map((r) => panel.value(r)).filter((v): v is number => v !== null && Number.isFinite(v) && v > 0);
    const low = Math.log10(Math.min(...values) / 2);
    const high = Math.log10(Math.max(...values) * 1.2);
    const scale = (v: number) => ((Math.log10(v) - low) / (high - low)) * (WIDTH - LEFT - RIGHT);
    for (const [i, row] of rows.entries()) {
      const y = y0 + PANEL_TOP + i * (BAR + GAP);
      const value = panel.value(row);
      out.push(`<text x="${LEFT - 8}" y="${y + BAR - 5}" text-anchor="end">${escape(row.label)}</text>`);
      if (value === null || !Number.isFinite(value) || value <= 0) {
        out.push(`<text x="${LEFT + 4}" y="${y + BAR - 5}" fill="#888">–</text>`);
        continue;
      }
      const w = Math.max(2, scale(value));
      out.push(`<rect x="${LEFT}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${COLORS[i % COLORS.length]}"/>`);
      out.push(`<text x="${(LEFT + w + 6).toFixed(1)}" y="${y + BAR - 5}">${escape(panel.format(value))}</text>`);
    }
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
