import { LuaScript, runInline, type ScriptClient } from './LuaScript.js';
import source from './release.lua';

export const releaseScript = new LuaScript('release', source);

/** Where release announces a deleted key: this prefix (written out in release.lua), then the key as the node stores it. */
export const RELEASE_CHANNEL_PREFIX = 'quorumlock:released:';

/**
 * Which deletions a release announces: `all` (this process has waiters in
 * line for the keys), `marked` (only keys a waiter marked: the others have
 * nobody listening) or `none` (the undo of a failed attempt, which would only
 * wake the very waiter that made it).
 */
export type Announce = 'all' | 'marked' | 'none';

/**
 * How many keys still held `value` (marked or not) and were deleted. An undo
 * (`none`) sends the whole script, so it runs even on a node whose replies
 * are lost and that forgot the script.
 */
export function release(client: ScriptClient, keys: readonly string[], value: string, announce: Announce = 'marked'): Promise<number> {
  if (announce === 'none') return runInline(releaseScript, client, keys, [value, 'none'], Number);
  return releaseScript.run(client, keys, announce === 'all' ? [value, 'all'] : [value], Number);
}
