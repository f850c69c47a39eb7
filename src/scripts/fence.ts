import { fencingKeyFor } from './fencingKey.js';
import { isOne, LuaScript, type ScriptClient } from './LuaScript.js';
import source from './fence.lua';

export const fenceScript = new LuaScript('fence', source);

/** Raises each resource's counter to at least its token while `value` holds every key. */
export function fence(client: ScriptClient, keys: readonly string[], value: string, tokens: readonly bigint[]): Promise<boolean> {
  return fenceScript.run(client, [...keys, ...keys.map(fencingKeyFor)], [value, ...tokens.map(String)], isOne);
}
