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
  const chunks = chunksOnce(chunksByBatch, entries, (start, end) => sameLayout(entries, start, end) ?? eachLayout(entries, start, end));
  return runChunks(client, extendManyScript, chunks, entries.length);
}

/** One script call's share of a batch of renewals: its keys, its arguments, and which of the batch's locks it carries. */
export interface RenewalChunk {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly start: number;
  readonly count: number;
}

const chunksByBatch = new WeakMap<readonly RenewalEntry[], readonly RenewalChunk[]>();

/**
 * A batch's script calls, one per RENEWALS_PER_CALL entries (`build` makes
 * the call of entries start to end): a batch goes to every node as the same
 * array, so its calls are built once, kept in `cache`, not once per node.
 */
export function chunksOnce<E>(
  cache: WeakMap<readonly E[], readonly RenewalChunk[]>,
  entries: readonly E[],
  build: (start: number, end: number) => RenewalChunk,
): readonly RenewalChunk[] {
  let chunks = cache.get(entries);
  if (chunks) return chunks;
  const built: RenewalChunk[] = [];
  for (let start = 0; start < entries.length || start === 0; start += RENEWALS_PER_CALL) {
    built.push(build(start, Math.min(entries.length, start + RENEWALS_PER_CALL)));
  }
  chunks = built;
  cache.set(entries, chunks);
  return chunks;
}

/** Sends a batch's calls back to back; true or false per entry of the batch (`total` of them), in order. */
export function runChunks(client: ScriptClient, script: LuaScript, chunks: readonly RenewalChunk[], total: number): Promise<boolean[]> {
  const held = new Array<boolean>(total);
  const run = (chunk: RenewalChunk) => script.run(client, chunk.keys, chunk.args, (reply) => readRenewals(reply, chunk.count, held, chunk.start));
  if (chunks.length === 1) return run(chunks[0] as RenewalChunk);
  // Each chunk's answers go straight to their place: no array per chunk to flatten.
  return Promise.all(chunks.map(run)).then(() => held);
}

/**
 * The usual chunk (one key per lock, one TTL, ASCII values of one length) as four
 * arguments and its keys: the client encodes a lock's value as part of one
 * string instead of three arguments of its own per lock and per node, which
 * were most of a renewal's CPU (ioredis turns every number into a string
 * and frames every argument, once per node). Undefined for any other chunk.
 */
function sameLayout(entries: readonly RenewalEntry[], start: number, end: number): RenewalChunk | undefined {
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
  return { keys, args: ['same', String(ttlMs), String(width), joined], start, count: end - start };
}

/** Any chunk: value, TTL and key count per lock. */
function eachLayout(entries: readonly RenewalEntry[], start: number, end: number): RenewalChunk {
  const keys: string[] = [];
  const args: (string | number)[] = ['each'];
  for (let i = start; i < end; i++) {
    const { keys: resources, value, ttlMs } = entries[i] as RenewalEntry;
    for (const key of resources) keys.push(key);
    args.push(value, ttlMs, resources.length);
  }
  return { keys, args, start, count: end - start };
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
