import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './acquire.lua';

export const acquireScript = new LuaScript('acquire', source);

/** True when every key now holds `value`; false when any holds another value. */
export async function acquire(client: ScriptClient, keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
  return (await acquireScript.run(client, keys, [value, ttlMs])) === 1;
}
