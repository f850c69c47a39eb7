/**
 * Replies as a Redis server sends them (RESP2), between the in-memory node's
 * commands, its Lua VM and its client. The client hands them on as ioredis
 * gives them: integers as numbers, bulk strings as strings, nil as null,
 * arrays as arrays, a status as its string, an error as a rejection.
 */
export type Reply = string | number | null | StatusReply | ErrorReply | readonly Reply[];

/** A status reply (+OK): a string to the client, `{ok = …}` to a script. */
export interface StatusReply {
  /** The status text (OK, …). */
  readonly status: string;
}

/** An error reply (-ERR …): a rejection to the client, `{err = …}` to a script. */
export interface ErrorReply {
  /** The error's message, its code first (ERR, WRONGTYPE, NOSCRIPT, …). */
  readonly error: string;
}

export const OK: StatusReply = Object.freeze({ status: 'OK' });

export function isStatus(reply: Reply): reply is StatusReply {
  return typeof reply === 'object' && reply !== null && 'status' in reply;
}

export function isError(reply: Reply): reply is ErrorReply {
  return typeof reply === 'object' && reply !== null && 'error' in reply;
}

export function errorReply(message: string): ErrorReply {
  return { error: message };
}

/**
 * What a Lua number becomes as a command argument: Redis formats it with
 * "%.17g" (7.0), so an integral float is written without a fraction ("10",
 * where Lua 5.4's tostring says "10.0").
 */
export function formatLuaNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e17) return String(value);
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  const [mantissa, exponent] = value.toExponential(16).split('e') as [string, string];
  const power = Number(exponent);
  if (power < -4 || power >= 17) return `${trimZeros(mantissa)}e${power < 0 ? '-' : '+'}${String(Math.abs(power)).padStart(2, '0')}`;
  return trimZeros(value.toFixed(Math.max(0, 16 - power)));
}

function trimZeros(decimal: string): string {
  return decimal.includes('.') ? decimal.replace(/\.?0+$/, '') : decimal;
}
