import { fencingKeyFor } from './fencingKey.js';
import { isOne, LuaScript, type ScriptClient } from './LuaScript.js';
import source from './acquire.lua';

export const acquireScript = new LuaScript('acquire', source);

/** The part of a client that runs SET. */
export interface SetClient {
  set(key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX'): Promise<unknown>;
}

/**
 * True when every key now holds `value`; false when any holds another value.
 * One key is taken with a plain SET NX PX: a third of the script's server
 * time, and the lock's commonest case. The one difference: a key that already
 * holds our own value (a retry after a lost reply whose undo also failed)
 * counts as held, so that node stays out of the vote until the key expires.
 *
 * `markIfHeld`: the caller listens for release announcements, so a key found
 * held gets the waiter's mark (see waiterMark.ts) in the same step; that takes
 * the script, also for one key.
 */
export function acquire(
  client: ScriptClient & SetClient,
  keys: readonly string[],
  value: string,
  ttlMs: number,
  markIfHeld = false,
): Promise<boolean> {
  if (markIfHeld) return acquireScript.run(client, keys, [value, ttlMs, '', 'mark'], isOne);
  if (keys.length === 1) return client.set(keys[0] as string, value, 'PX', ttlMs, 'NX').then(isOk);
  return acquireScript.run(client, keys, [value, ttlMs], isOne);
}

function isOk(reply: unknown): boolean {
  return reply === 'OK';
}

/**
 * Like acquire, and hands out each resource's next fencing token on this node;
 * null when any key holds another value.
 */
export function acquireFenced(
  client: ScriptClient,
  keys: readonly string[],
  value: string,
  ttlMs: number,
  markIfHeld = false,
): Promise<bigint[] | null> {
  const args = markIfHeld ? [value, ttlMs, 'fence', 'mark'] : [value, ttlMs, 'fence'];
  return acquireScript.run(client, [...keys, ...keys.map(fencingKeyFor)], args, toTokens);
}

function toTokens(reply: unknown): bigint[] | null {
  if (!Array.isArray(reply)) return null;
  return reply.map((token) => BigInt(token as number | string));
}
