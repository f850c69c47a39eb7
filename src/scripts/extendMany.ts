import { LuaScript, type ScriptClient } from './LuaScript.js';
import source from './extendMany.lua';

export const extendManyScript = new LuaScript('extendMany', source);

/** One lock's renewal, as extendMany sends it. */
export interface RenewalEntry {
  readonly keys: readonly string[];
  readonly value: string;
  readonly ttlMs: number;
}

/**
 * Locks per script call. A call of 100 renewals ran in ~0.2 ms on the
 * server here (GET and PEXPIRE per key), short enough not to hold up other
 * clients' commands, and it is Redisson's batch size too.
 */
export const RENEWALS_PER_CALL = 100;

/**
 * Extends every entry whose keys still hold its value, one script call per
 * RENEWALS_PER_CALL entries (sent back to back); true or false per entry, in
 * order. All the keys of one call must be on one node (one hash slot on a
 * Cluster: see RedisNodeBackend.extendMany).
 */
export function extendMany(client: ScriptClient, entries: readonly RenewalEntry[]): Promise<boolean[]> {
  if (entries.length <= RENEWALS_PER_CALL) return extendChunk(client, entries);
  const calls: Promise<boolean[]>[] = [];
  for (let start = 0; start < entries.length; start += RENEWALS_PER_CALL) {
    calls.push(extendChunk(client, entries.slice(start, start + RENEWALS_PER_CALL)));
  }
  return Promise.all(calls).then((replies) => replies.flat());
}

function extendChunk(client: ScriptClient, entries: readonly RenewalEntry[]): Promise<boolean[]> {
  const keys: string[] = [];
  const args: (string | number)[] = [];
  for (const { keys: resources, value, ttlMs } of entries) {
    for (const key of resources) keys.push(key);
    args.push(value, ttlMs, resources.length);
  }
  return extendManyScript.run(client, keys, args, (reply) => readResults(reply, entries.length));
}

function readResults(reply: unknown, count: number): boolean[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error(`extendMany answered ${String(reply)} for ${count} locks`);
  return reply.map((held) => held === 1);
}
