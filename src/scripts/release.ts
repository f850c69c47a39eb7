import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './release.lua';

export const releaseScript = new LuaScript('release', source);

/** Where release announces a deleted key: this prefix, then the key as the node stores it. */
export const RELEASE_CHANNEL_PREFIX = 'quorumlock:released:';

/**
 * How many keys still held `value` and were deleted. Each is announced on its
 * channel unless `announce` is false: the undo of a failed attempt wakes
 * nobody, least of all the waiter that made it.
 */
export async function release(client: ScriptClient, keys: readonly string[], value: string, announce = true): Promise<number> {
  return Number(await releaseScript.run(client, keys, [value, announce ? RELEASE_CHANNEL_PREFIX : '']));
}
