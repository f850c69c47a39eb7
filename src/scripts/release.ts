import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './release.lua';

export const releaseScript = new LuaScript('release', source);

/** Where release announces a deleted key: this prefix, then the key as the node stores it. */
export const RELEASE_CHANNEL_PREFIX = 'quorumlock:released:';

/** How many keys still held `value` and were deleted (each announced on its channel). */
export async function release(client: ScriptClient, keys: readonly string[], value: string): Promise<number> {
  return Number(await releaseScript.run(client, keys, [value, RELEASE_CHANNEL_PREFIX]));
}
