/** Small order statistics and a fairness index, over plain number arrays. */

/** The q-quantile (0..1) of `values`, nearest-rank on a sorted copy; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return Number.NaN;
  const sorted = Float64Array.from(finite).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * Jain's fairness index (Σx)² / (n·Σx²): 1 when every waiter got the same
 * share, 1/n when one waiter got everything.
 */
export function jainIndex(shares: readonly number[]): number {
  let sum = 0;
  let squares = 0;
  for (const x of shares) {
    sum += x;
    squares += x * x;
  }
  return squares === 0 ? Number.NaN : (sum * sum) / (shares.length * squares);
}

/** Smallest share over largest: 0 when some waiter never got the lock. */
export function minMaxShare(shares: readonly number[]): number {
  if (shares.length === 0) return Number.NaN;
  const max = Math.max(...shares);
  return max === 0 ? Number.NaN : Math.min(...shares) / max;
}
