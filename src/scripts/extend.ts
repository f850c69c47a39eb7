import { isOne, LuaScript, type ScriptClient } from './LuaScript.js';
import source from './extend.lua';

export const extendScript = new LuaScript('extend', source);

/** True when every key still held `value` and got the new TTL. */
export function extend(client: ScriptClient, keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
  return extendScript.run(client, keys, [value, ttlMs], isOne);
}
