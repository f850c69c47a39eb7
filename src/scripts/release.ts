import { LuaScript, runInline, type ScriptClient } from './LuaScript.js';
import source from './release.lua';

export const releaseScript = new LuaScript('release', source);

/** Where release announces a deleted key: this prefix, then the key as the node stores it. */
export const RELEASE_CHANNEL_PREFIX = 'quorumlock:released:';

/**
 * How many keys still held `value` and were deleted, each announced on its
 * channel. An `undo` (of a failed attempt) announces nothing, since it would
 * wake the very waiter that made the attempt, and sends the whole script, so
 * it runs even on a node whose replies are lost and that forgot the script.
 */
export function release(client: ScriptClient, keys: readonly string[], value: string, undo = false): Promise<number> {
  if (undo) return runInline(releaseScript, client, keys, [value, ''], Number);
  return releaseScript.run(client, keys, [value, RELEASE_CHANNEL_PREFIX], Number);
}
