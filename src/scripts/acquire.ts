import { fencingKeyFor } from './fencingKey.js';
import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './acquire.lua';

export const acquireScript = new LuaScript('acquire', source);

/** True when every key now holds `value`; false when any holds another value. */
export async function acquire(client: ScriptClient, keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
  return (await acquireScript.run(client, keys, [value, ttlMs])) === 1;
}

/**
 * Like acquire, and hands out each resource's next fencing token on this node;
 * null when any key holds another value.
 */
export async function acquireFenced(
  client: ScriptClient,
  keys: readonly string[],
  value: string,
  ttlMs: number,
): Promise<bigint[] | null> {
  const reply = await acquireScript.run(client, [...keys, ...keys.map(fencingKeyFor)], [value, ttlMs, 'fence']);
  if (!Array.isArray(reply)) return null;
  return reply.map((token) => BigInt(token as number | string));
}
