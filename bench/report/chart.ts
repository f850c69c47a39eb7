/**
 * An SVG of the run, written as text: one panel per scenario, a group of bars
 * per node count, one bar per contender showing its speed relative to the
 * raw floor on the scenario's headline metric (log scale, 1× = the floor,
 * higher is better). Peers' default settings are solid, their best settings
 * hatched.
 */
import { METRICS } from '../metrics.js';
import type { ContenderResult, PermitsResult, RunResult, ScenarioResult } from '../results.js';
import { rowLabel } from './permits.js';
import { floorOf, speedup } from './ratios.js';
import { contenderLabel } from './table.js';

const WIDTH = 1000;
const PANEL_HEIGHT = 250;
const TOP = 86;
const LEFT = 64;
const RIGHT = 20;
const LEGEND_HEIGHT = 64;
const BAR_GAP = 2;

const COLORS: Record<string, string> = {
  quorumlock: '#1f5fbf',
  'quorumlock-candidate': '#17becf',
  'node-redlock': '#e07b20',
  'sesame-redlock': '#8e5bb5',
  'redis-semaphore': '#2f9e55',
};
const NICE_TICKS = [0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 5, 10, 20, 50];

interface Bar {
  readonly contender: ContenderResult;
  readonly speed: number;
}

export function renderChart(run: RunResult): string {
  const scenarioIds = [...new Set(run.topologies.flatMap((t) => t.scenarios.map((s) => s.id)))];
  const panels = scenarioIds.length + (run.permits === undefined ? 0 : 1);
  const height = TOP + panels * PANEL_HEIGHT + LEGEND_HEIGHT;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`,
    '<defs>',
    ...Object.entries(COLORS).map(
      ([library, color]) =>
        `<pattern id="hatch-${library}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="${color}" opacity="0.35"/><rect width="3" height="6" fill="${color}"/></pattern>`,
    ),
    '</defs>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(LEFT, 28, 'quorumlock vs the Node.js Redis lock libraries: speed relative to the raw floor', { size: 18, weight: 'bold' }),
    text(
      LEFT,
      50,
      '1× = raw ioredis SET NX PX + EVALSHA release on the same nodes, in the same run. Above the line: faster than the floor; below: slower. Log scale.',
      { size: 12, fill: '#444' },
    ),
    text(
      LEFT,
      68,
      `${run.meta.mode === 'quick' ? 'QUICK SMOKE RUN (numbers meaningless) · ' : ''}${run.meta.startedAt} · ${run.meta.cpus} × ${run.meta.cpuModel} · Node ${run.meta.node} · Redis ${run.meta.redisVersion} · medians over interleaved rounds`,
      { size: 11, fill: '#666' },
    ),
  ];
  scenarioIds.forEach((id, index) => {
    out.push(panel(run, id, TOP + index * PANEL_HEIGHT));
  });
  if (run.permits !== undefined) out.push(permitsPanel(run.permits, TOP + scenarioIds.length * PANEL_HEIGHT));
  out.push(legend(run, TOP + panels * PANEL_HEIGHT + 8));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function panel(run: RunResult, scenarioId: string, y0: number): string {
  const groups = run.topologies.flatMap((t) => {
    const scenario = t.scenarios.find((s) => s.id === scenarioId);
    return scenario === undefined ? [] : [{ nodes: t.nodes, scenario, bars: barsOf(scenario) }];
  });
  const first = groups[0]?.scenario;
  if (first === undefined) return '';
  const plotTop = y0 + 34;
  const plotBottom = y0 + PANEL_HEIGHT - 34;
  const plotLeft = LEFT;
  const plotRight = WIDTH - RIGHT;

  const speeds = groups.flatMap((g) => g.bars.map((b) => b.speed)).filter((s) => Number.isFinite(s) && s > 0);
  const lo = Math.min(0.5, ...speeds.map((s) => s / 1.15));
  const hi = Math.max(2, ...speeds.map((s) => s * 1.15));
  const scaleY = (v: number): number => plotBottom - ((Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))) * (plotBottom - plotTop);
  const baseline = scaleY(1);

  const out: string[] = [];
  const metric = METRICS[first.headline];
  out.push(text(plotLeft, y0 + 16, `${first.title}`, { size: 14, weight: 'bold' }));
  out.push(
    text(
      plotLeft,
      y0 + 30,
      `bars: ${metric.heading} relative to the floor (${metric.better === 'lower' ? 'floor ÷ contender' : 'contender ÷ floor'})${
        first.kind === 'contended' ? ' · the floor here polls every 1–3 ms: a reference, not a bound · fairness and waits: see the table' : ''
      }`,
      {
      size: 11,
      fill: '#555',
    }),
  );
  for (const tick of NICE_TICKS.filter((t) => t >= lo && t <= hi)) {
    const y = scaleY(tick);
    out.push(`<line x1="${plotLeft}" x2="${plotRight}" y1="${fmt(y)}" y2="${fmt(y)}" stroke="${tick === 1 ? '#222' : '#e3e3e3'}" stroke-width="${tick === 1 ? 1.5 : 1}"/>`);
    out.push(text(plotLeft - 6, y + 4, `${tick}×`, { size: 11, anchor: 'end', fill: tick === 1 ? '#222' : '#777' }));
  }
  out.push(text(plotRight, baseline - 4, 'raw floor', { size: 10, anchor: 'end', fill: '#222' }));

  const groupWidth = (plotRight - plotLeft) / Math.max(1, groups.length);
  groups.forEach((group, gi) => {
    const gx = plotLeft + gi * groupWidth;
    const inner = groupWidth * 0.8;
    const barWidth = Math.min(42, (inner - BAR_GAP * group.bars.length) / Math.max(1, group.bars.length));
    const used = group.bars.length * (barWidth + BAR_GAP);
    const startX = gx + (groupWidth - used) / 2;
    group.bars.forEach((bar, bi) => {
      const x = startX + bi * (barWidth + BAR_GAP);
      const valid = Number.isFinite(bar.speed) && bar.speed > 0;
      const y = valid ? scaleY(bar.speed) : baseline;
      const top = Math.min(y, baseline);
      const h = Math.max(1, Math.abs(baseline - y));
      const fill = bar.contender.variant === 'best' ? `url(#hatch-${bar.contender.library})` : (COLORS[bar.contender.library] ?? '#999');
      const label = `${contenderLabel(bar.contender)}: ${valid ? bar.speed.toFixed(2) : '–'}× the floor's speed`;
      out.push(`<rect x="${fmt(x)}" y="${fmt(top)}" width="${fmt(barWidth)}" height="${fmt(h)}" fill="${fill}"><title>${escape(label)}</title></rect>`);
      const labelY = y <= baseline ? top - 3 : top + h + 11;
      out.push(
        text(x + barWidth / 2, labelY, valid ? bar.speed.toFixed(2) : '–', {
          size: 9,
          anchor: 'middle',
          fill: '#333',
          weight: bar.contender.role === 'ours' ? 'bold' : 'normal',
        }),
      );
    });
    out.push(text(gx + groupWidth / 2, plotBottom + 24, `${group.nodes} node${group.nodes === 1 ? '' : 's'}`, { size: 12, anchor: 'middle', weight: 'bold' }));
  });
  return out.join('\n');
}

/**
 * The semaphore and the read-write lock across processes: critical sections
 * per second on a linear scale (they have no raw floor), a group per node
 * count and primitive. A contender that let more hold than allowed gets a
 * red mark with the count, as the mutex rows' overlaps.
 */
function permitsPanel(permits: PermitsResult, y0: number): string {
  const groups = [...new Set(permits.rows.map((row) => `${row.nodes}:${row.primitive}`))].map((id) =>
    permits.rows.filter((row) => `${row.nodes}:${row.primitive}` === id),
  );
  const plotTop = y0 + 62;
  const plotBottom = y0 + PANEL_HEIGHT - 34;
  const plotLeft = LEFT;
  const plotRight = WIDTH - RIGHT;
  const hi = Math.max(1, ...permits.rows.map((row) => row.summary.sectionsPerSec).filter(Number.isFinite)) * 1.1;
  const scaleY = (v: number): number => plotBottom - (v / hi) * (plotBottom - plotTop);
  const out: string[] = [
    text(plotLeft, y0 + 16, `semaphore (limit ${permits.limit}) and read-write lock across ${permits.processes} processes × ${permits.waitersPerProcess} waiters`, { size: 14, weight: 'bold' }),
    text(plotLeft, y0 + 30, `bars: critical sections/s (higher is better), ${permits.holdMs} ms holds · hatched: quorumlock's mutex taking every section alone`, { size: 11, fill: '#555' }),
    text(plotLeft, y0 + 44, 'red ✗ N: N sections begun above the limit, or beside a writer (must be 0)', { size: 11, fill: '#c62828' }),
  ];
  const step = niceStep(hi);
  for (let tick = 0; tick <= hi; tick += step) {
    const y = scaleY(tick);
    out.push(`<line x1="${plotLeft}" x2="${plotRight}" y1="${fmt(y)}" y2="${fmt(y)}" stroke="${tick === 0 ? '#222' : '#e3e3e3'}" stroke-width="1"/>`);
    out.push(text(plotLeft - 6, y + 4, tick >= 1000 ? `${tick / 1000}k` : String(tick), { size: 11, anchor: 'end', fill: '#777' }));
  }
  const groupWidth = (plotRight - plotLeft) / Math.max(1, groups.length);
  groups.forEach((rows, gi) => {
    const gx = plotLeft + gi * groupWidth;
    const barWidth = Math.min(42, (groupWidth * 0.8) / Math.max(1, rows.length) - BAR_GAP);
    const startX = gx + (groupWidth - rows.length * (barWidth + BAR_GAP)) / 2;
    rows.forEach((row, bi) => {
      const x = startX + bi * (barWidth + BAR_GAP);
      const value = row.summary.sectionsPerSec;
      const y = Number.isFinite(value) ? scaleY(value) : plotBottom;
      const fill = row.role === 'reference' ? `url(#hatch-${row.library})` : (COLORS[row.library] ?? '#999');
      out.push(
        `<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(barWidth)}" height="${fmt(Math.max(1, plotBottom - y))}" fill="${fill}"><title>${escape(`${rowLabel(row)}: ${value.toFixed(0)} sections/s`)}</title></rect>`,
      );
      out.push(text(x + barWidth / 2, y - 3, Number.isFinite(value) ? value.toFixed(0) : '–', { size: 9, anchor: 'middle', weight: row.role === 'ours' ? 'bold' : 'normal' }));
      if (row.summary.violations > 0) {
        out.push(text(x + barWidth / 2, y - 14, `✗ ${row.summary.violations}`, { size: 10, anchor: 'middle', weight: 'bold', fill: '#c62828' }));
      }
    });
    const first = rows[0];
    if (first !== undefined) {
      const label = `${first.nodes} node${first.nodes === 1 ? '' : 's'} · ${first.primitive === 'semaphore' ? 'semaphore' : 'read-write lock'}`;
      out.push(text(gx + groupWidth / 2, plotBottom + 24, label, { size: 12, anchor: 'middle', weight: 'bold' }));
    }
  });
  return out.join('\n');
}

/** A tick step of 1, 2 or 5 × a power of ten giving about five ticks up to `hi`. */
function niceStep(hi: number): number {
  const rough = hi / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? power * 10;
}

function barsOf(scenario: ScenarioResult): Bar[] {
  const floor = floorOf(scenario);
  return scenario.contenders
    .filter((c) => c.role !== 'floor')
    .map((contender) => ({ contender, speed: speedup(contender, floor, scenario.headline) }));
}

function legend(run: RunResult, y: number): string {
  const libraries = [
    ...new Set([...run.topologies.flatMap((t) => t.scenarios.flatMap((s) => s.contenders.map((c) => c.library))), ...(run.permits?.rows.map((row) => row.library) ?? [])]),
  ].filter(
    (l) => l !== 'raw',
  );
  const out: string[] = [];
  let x = LEFT;
  for (const library of libraries) {
    const color = COLORS[library] ?? '#999';
    out.push(`<rect x="${x}" y="${y}" width="14" height="14" fill="${color}"/>`);
    out.push(text(x + 20, y + 11, library, { size: 12 }));
    x += 40 + library.length * 7;
  }
  out.push(`<rect x="${x + 10}" y="${y}" width="14" height="14" fill="#777"/>`);
  out.push(text(x + 30, y + 11, 'defaults', { size: 12 }));
  out.push(`<rect x="${x + 100}" y="${y}" width="14" height="14" fill="url(#hatch-node-redlock)"/>`);
  out.push(text(x + 120, y + 11, 'best settings (peers)', { size: 12 }));
  out.push(
    text(LEFT, y + 34, 'All numbers, per round: the JSON next to this file. How to read them: bench/README.md.', {
      size: 11,
      fill: '#666',
    }),
  );
  return out.join('\n');
}

interface TextStyle {
  readonly size?: number;
  readonly weight?: string;
  readonly anchor?: 'start' | 'middle' | 'end';
  readonly fill?: string;
}

function text(x: number, y: number, content: string, style: TextStyle = {}): string {
  return `<text x="${fmt(x)}" y="${fmt(y)}" font-size="${style.size ?? 12}" font-weight="${style.weight ?? 'normal'}" text-anchor="${style.anchor ?? 'start'}" fill="${style.fill ?? '#111'}">${escape(content)}</text>`;
}

function fmt(n: number): string {
  return Number.isFinite(n) ? n.toFixed(1) : '0';
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
