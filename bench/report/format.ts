/** Number formatting shared by the table, the headline and the chart. */
import { METRICS, type MetricId } from '../metrics.js';

export function formatMetric(id: MetricId, value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  const { digits } = METRICS[id];
  if (digits === 0 && Math.abs(value) >= 10_000) return `${(value / 1000).toFixed(1)}k`;
  return value.toFixed(digits);
}

export function formatRatio(ratio: number | undefined): string {
  if (ratio === undefined || !Number.isFinite(ratio)) return '–';
  return `${ratio.toFixed(2)}×`;
}
