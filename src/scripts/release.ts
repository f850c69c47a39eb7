import { lineScript, RESERVATION_MS, withLines } from './line.js';
import { LuaScript, runInline, type ScriptClient } from './LuaScript.js';
import source from './release.lua';
import plainSource from './releasePlain.lua';

export const releaseScript = lineScript('release', source);
export const releasePlainScript = new LuaScript('releasePlain', plainSource);

/** Where release announces a deleted key: this prefix (written out in release.lua), then the key as the node stores it. */
export const RELEASE_CHANNEL_PREFIX = 'quorumlock:released:';

/**
 * Where a handoff to a waiter is announced: this prefix (written out in
 * line.lua), then the tag of the waiter's process (PROCESS_TAG); the message
 * is '<value> <server µs> <reservation ms> <key>' (wakeup/handoffGrant.ts's
 * parseHandoff), the key as the node stores it.
 */
export const HANDOFF_CHANNEL_PREFIX = 'quorumlock:handoff:';

/**
 * Which deletions a release announces: `all` (this process has waiters in
 * line for the keys), `marked` (only keys a waiter marked: the others have
 * nobody listening) or `none` (the undo of a failed attempt, which would only
 * wake the very waiter that made it). A handoff to a waiter in a wait line
 * is always announced, to that waiter. `plain`: as `marked`, for a lock
 * taken without contention (see Grant.contended): releasePlain.lua, which
 * names no line key, and falls back to release.lua when a waiter marked a key.
 */
export type Announce = 'all' | 'marked' | 'plain' | 'none';

/** An undo by a waiter in line: its place, restored before the freed key is handed on. */
export interface Rejoin {
  readonly ticket: number;
  readonly leaseMs: number;
}

/** What an undo by a waiter in line did on one node. */
export interface UndoneInLine {
  /** Keys that still held our value and were deleted. */
  readonly released: number;
  /**
   * The node's server time in µs when it put us back in line, if it did: a
   * handoff to us announced at that time or later came after the undo (its
   * own handoff among them), and may count (wakeup/handoffGrant.ts).
   */
  readonly rejoinedAtUs?: number;
}

/**
 * How many keys still held `value` (marked or not) and were deleted. An undo
 * (`none`) sends the whole script, so it runs even on a node whose replies
 * are lost and that forgot the script.
 */
export function release(client: ScriptClient, keys: readonly string[], value: string, announce: Announce = 'marked'): Promise<number> {
  if (announce === 'plain') {
    return releasePlainScript.run(client, keys, [value], Number).then((released) =>
      // A waiter marked a key while we held it: hand the keys over in line order.
      released >= 0 ? released : release(client, keys, value, 'marked'),
    );
  }
  const all = withLines(keys);
  if (announce === 'none') return runInline(releaseScript, client, all, [value, 'none'], Number);
  return releaseScript.run(client, all, announce === 'all' ? [value, 'all'] : [value], Number);
}

/**
 * The undo of a failed attempt by a waiter in line (release with `none`,
 * whole script): our value deleted where it landed, and our place restored
 * before a freed key is handed on, so it may come straight back to us.
 */
export function undoInLine(client: ScriptClient, keys: readonly string[], value: string, rejoin: Rejoin): Promise<UndoneInLine> {
  const args = [value, 'none', String(RESERVATION_MS), rejoin.ticket, rejoin.leaseMs];
  return runInline(releaseScript, client, withLines(keys), args, readUndone);
}

function readUndone(reply: unknown): UndoneInLine {
  const [released, rejoinedAtUs] = reply as [number, number];
  return rejoinedAtUs > 0 ? { released: Number(released), rejoinedAtUs: Number(rejoinedAtUs) } : { released: Number(released) };
}
