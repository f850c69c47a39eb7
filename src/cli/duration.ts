import { MAX_TTL_MS } from '../lock/validate.js';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;

/** What a valid duration looks like, for error messages. */
export const DURATION_HINT = 'expected a duration like 500ms, 30s, 5m, 1h or plain milliseconds';

/**
 * Parses `500ms`, `30s`, `5m`, `1h`, `1.5s` or plain milliseconds into whole
 * milliseconds. Throws a RangeError that says what was expected.
 */
export function parseDuration(text: string, minMs = 0): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new RangeError(DURATION_HINT);
  const [, amount = '', unit = 'ms'] = match;
  const ms = Number(amount) * (UNIT_MS[unit] ?? 1);
  if (!Number.isInteger(ms)) throw new RangeError('expected a whole number of milliseconds');
  if (ms < minMs) throw new RangeError(`expected at least ${minMs} ms`);
  if (ms > MAX_TTL_MS) throw new RangeError(`expected at most ${MAX_TTL_MS} ms (about 24.8 days)`);
  return ms;
}

/** `--wait`: `forever` (Infinity), `0` (one attempt) or a duration. */
export function parseWait(text: string): number {
  if (text.trim() === 'forever') return Number.POSITIVE_INFINITY;
  try {
    return parseDuration(text);
  } catch (error) {
    throw new RangeError(`${(error as Error).message}, or forever`);
  }
}
