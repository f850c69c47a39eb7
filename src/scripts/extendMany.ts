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
  const chunks = chunksOf(entries);
  if (chunks.length === 1) return runChunk(client, chunks[0] as Chunk);
  return Promise.all(chunks.map((chunk) => runChunk(client, chunk))).then((replies) => replies.flat());
}

interface Chunk {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly count: number;
}

/**
 * A batch goes to every node as the same array: its script arguments are
 * built once, not once per node.
 */
const chunksByBatch = new WeakMap<readonly RenewalEntry[], readonly Chunk[]>();

function chunksOf(entries: readonly RenewalEntry[]): readonly Chunk[] {
  let chunks = chunksByBatch.get(entries);
  if (chunks) return chunks;
  const built: Chunk[] = [];
  for (let start = 0; start < entries.length || start === 0; start += RENEWALS_PER_CALL) {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    const end = Math.min(entries.length, start + RENEWALS_PER_CALL);
    for (let i = start; i < end; i++) {
      const { keys: resources, value, ttlMs } = entries[i] as RenewalEntry;
      for (const key of resources) keys.push(key);
      args.push(value, ttlMs, resources.length);
    }
    built.push({ keys, args, count: end - start });
  }
  chunks = built;
  chunksByBatch.set(entries, chunks);
  return chunks;
}

function runChunk(client: ScriptClient, chunk: Chunk): Promise<boolean[]> {
  return extendManyScript.run(client, chunk.keys, chunk.args, (reply) => readResults(reply, chunk.count));
}

function readResults(reply: unknown, count: number): boolean[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error(`extendMany answered ${String(reply)} for ${count} locks`);
  return reply.map((held) => held === 1);
}
