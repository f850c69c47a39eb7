import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './release.lua';

export const releaseScript = new LuaScript('release', source);

/** How many keys still held `value` and were deleted. */
export async function release(client: ScriptClient, keys: readonly string[], value: string): Promise<number> {
  return Number(await releaseScript.run(client, keys, [value]));
}
