/**
 * The held scenario's chart: cost against locks held, log-log, one line per
 * library (solid: the largest node count; dashed: one node). Left panel:
 * requests per node per second; right panel: the holding process's CPU.
 */
import type { HeldSample } from './protocol.js';

const COLORS: Record<string, string> = {
  quorumlock: '#1f5fbf',
  'quorumlock-candidate': '#8a5fbf',
  'node-redlock': '#e07b20',
  'redis-semaphore': '#2f9e55',
};
const WIDTH = 1000;
const HEIGHT = 420;
const PANEL = { top: 80, height: 280, width: 420 };

export function renderHeldChart(samples: readonly HeldSample[], startedAt: string): string {
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    text(60, 28, 'What holding many locks costs: quorumlock vs node-redlock using() and redis-semaphore auto-refresh', 16, 'bold'),
    text(60, 48, `${startedAt} · same TTL for all · solid: most nodes, dashed: 1 node · log-log, lower is better`, 11),
    panel(samples, 60, 'requests per node per second', (s) => s.reqsPerNodePerS),
    panel(samples, 550, 'client CPU, % of one core', (s) => s.cpuPercent),
  ];
  let x = 60;
  const measured = new Set(samples.map((s) => s.library));
  for (const [library, color] of Object.entries(COLORS)) {
    if (!measured.has(library)) continue;
    out.push(`<rect x="${x}" y="${HEIGHT - 22}" width="14" height="4" fill="${color}"/>`, text(x + 20, HEIGHT - 16, library, 12));
    x += 160;
  }
  out.push('</svg>');
  return out.join('\n');
}

function panel(samples: readonly HeldSample[], left: number, title: string, value: (s: HeldSample) => number): string {
  const points = samples.filter((s) => value(s) > 0 && Number.isFinite(value(s)));
  if (points.length === 0) return '';
  const counts = points.map((s) => s.count);
  const values = points.map(value);
  const [x0, x1] = [Math.log10(Math.min(...counts)), Math.log10(Math.max(...counts)) || 1];
  const [y0, y1] = [Math.floor(Math.log10(Math.min(...values))), Math.ceil(Math.log10(Math.max(...values)))];
  const px = (count: number) => left + ((Math.log10(count) - x0) / Math.max(1e-9, x1 - x0)) * PANEL.width;
  const py = (v: number) => PANEL.top + PANEL.height - ((Math.log10(v) - y0) / Math.max(1, y1 - y0)) * PANEL.height;
  const out = [text(left, PANEL.top - 10, title, 13, 'bold')];
  out.push(`<rect x="${left}" y="${PANEL.top}" width="${PANEL.width}" height="${PANEL.height}" fill="none" stroke="#ccc"/>`);
  for (let e = y0; e <= y1; e++) {
    const y = py(10 ** e);
    out.push(`<line x1="${left}" x2="${left + PANEL.width}" y1="${y}" y2="${y}" stroke="#eee"/>`, text(left - 6, y + 4, `1e${e}`, 10, 'normal', 'end'));
  }
  for (const count of [...new Set(counts)]) out.push(text(px(count), PANEL.top + PANEL.height + 16, `${count} locks`, 10, 'normal', 'middle'));
  const maxNodes = Math.max(...points.map((s) => s.nodes));
  for (const library of Object.keys(COLORS)) {
    for (const nodes of [...new Set(points.map((s) => s.nodes))]) {
      const line = points.filter((s) => s.library === library && s.nodes === nodes).sort((a, b) => a.count - b.count);
      if (line.length === 0) continue;
      const path = line.map((s, i) => `${i === 0 ? 'M' : 'L'}${px(s.count).toFixed(1)},${py(value(s)).toFixed(1)}`).join(' ');
      const dash = nodes === maxNodes ? '' : ' stroke-dasharray="5,4"';
      out.push(`<path d="${path}" fill="none" stroke="${COLORS[library]}" stroke-width="2"${dash}/>`);
      for (const s of line) out.push(`<circle cx="${px(s.count).toFixed(1)}" cy="${py(value(s)).toFixed(1)}" r="3" fill="${COLORS[library]}"/>`);
    }
  }
  return out.join('\n');
}

function text(x: number, y: number, content: string, size: number, weight = 'normal', anchor = 'start'): string {
  const escaped = content.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<text x="${x}" y="${y}" font-size="${size}" font-weight="${weight}" text-anchor="${anchor}">${escaped}</text>`;
}
