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
  const held = new Array<boolean>(entries.length);
  if (chunks.length === 1) return runChunk(client, chunks[0] as Chunk, held, 0);
  // Each chunk's answers go straight to their place: no array per chunk to flatten.
  return Promise.all(chunks.map((chunk, i) => runChunk(client, chunk, held, i * RENEWALS_PER_CALL))).then(() => held);
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
    const end = Math.min(entries.length, start + RENEWALS_PER_CALL);
    built.push(sameLayout(entries, start, end) ?? eachLayout(entries, start, end));
  }
  chunks = built;
  chunksByBatch.set(entries, chunks);
  return chunks;
}

/**
 * The usual chunk (one key per lock, one TTL, ASCII values of one length) as four
 * arguments and its keys: the client encodes a lock's value as part of one
 * string instead of three arguments of its own per lock and per node, which
 * were most of a renewal's CPU (ioredis turns every number into a string
 * and frames every argument, once per node). Undefined for any other chunk.
 */
function sameLayout(entries: readonly RenewalEntry[], start: number, end: number): Chunk | undefined {
  const first = entries[start];
  if (first === undefined) return undefined;
  const { ttlMs } = first;
  const width = first.value.length;
  const keys: string[] = [];
  const values: string[] = [];
  for (let i = start; i < end; i++) {
    const { keys: resources, value, ttlMs: ttl } = entries[i] as RenewalEntry;
    if (resources.length !== 1 || ttl !== ttlMs || value.length !== width) return undefined;
    keys.push(resources[0] as string);
    values.push(value);
  }
  const joined = values.join('');
  // Lua cuts the values by bytes: a value outside ASCII is longer there than here.
  if (Buffer.byteLength(joined) !== joined.length) return undefined;
  return { keys, args: ['same', String(ttlMs), String(width), joined], count: end - start };
}

/** Any chunk: value, TTL and key count per lock. */
function eachLayout(entries: readonly RenewalEntry[], start: number, end: number): Chunk {
  const keys: string[] = [];
  const args: (string | number)[] = ['each'];
  for (let i = start; i < end; i++) {
    const { keys: resources, value, ttlMs } = entries[i] as RenewalEntry;
    for (const key of resources) keys.push(key);
    args.push(value, ttlMs, resources.length);
  }
  return { keys, args, count: end - start };
}

function runChunk(client: ScriptClient, chunk: Chunk, held: boolean[], offset: number): Promise<boolean[]> {
  return extendManyScript.run(client, chunk.keys, chunk.args, (reply) => readRenewals(reply, chunk.count, held, offset));
}

/**
 * extendMany's reply, one character per lock ('1': extended), as true or
 * false per lock, written into `held` from `offset` on; throws on anything else.
 */
export function readRenewals(reply: unknown, count: number, held: boolean[] = new Array<boolean>(count), offset = 0): boolean[] {
  const text = Buffer.isBuffer(reply) ? reply.toString('latin1') : reply;
  if (typeof text !== 'string' || text.length !== count) throw new Error(`extendMany answered ${String(reply)} for ${count} locks`);
  for (let i = 0; i < count; i++) {
    const char = text.charCodeAt(i);
    if (char !== ONE && char !== ZERO) throw new Error(`extendMany answered ${text} for ${count} locks`);
    held[offset + i] = char === ONE;
  }
  return held;
}

const ONE = 0x31;
const ZERO = 0x30;
