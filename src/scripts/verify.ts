import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './verify.lua';

export const verifyScript = new LuaScript('verify', source);

/** The smallest PTTL of the keys when every one holds `value`, else 0. */
export function verify(client: ScriptClient, keys: readonly string[], value: string): Promise<number> {
  return verifyScript.run(client, keys, [value], Number);
}
