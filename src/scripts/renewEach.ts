import { RENEWALS_PER_CALL, readRenewals } from './extendMany.js';
import { LuaScript, type ScriptClient } from './LuaScript.js';
import eachSource from './renewEach.lua';

/** One holder's renewal as its primitive's extend script takes it: its keys and its arguments. */
export interface ScriptRenewal {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

/**
 * The script that renews many holders of a primitive in one call (renewEach.lua):
 * `body`, the primitive's own extend script for one holder (answering 1 or 0),
 * becomes the function renew_one(KEYS, ARGV), called once per holder with its
 * keys and arguments alone, so each is renewed exactly as it would be alone.
 * `preludes` go in front, as they go in front of the script itself (line.lua's
 * helpers, for one that reads the server's time).
 */
export function renewEachScript(name: string, preludes: readonly string[], body: string): LuaScript {
  return new LuaScript(name, [...preludes, 'local function renew_one(KEYS, ARGV)', body, 'end', eachSource].join('\n'));
}

/** One script call's share of a batch: its keys, its arguments, and where its holders start in the batch. */
interface Chunk {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  readonly start: number;
  readonly count: number;
}

/** A batch goes to every node as the same array: its calls' keys and arguments are built once, not once per node. */
const chunksByBatch = new WeakMap<readonly ScriptRenewal[], readonly Chunk[]>();

/**
 * Renews every entry with `script` (built by renewEachScript), one call per
 * RENEWALS_PER_CALL entries, sent back to back: true or false per entry, in
 * order. Every entry has as many arguments as the first; all the keys of one
 * call must be on one node (one hash slot on a Cluster).
 */
export function renewEach(client: ScriptClient, script: LuaScript, entries: readonly ScriptRenewal[]): Promise<boolean[]> {
  if (entries.length === 0) return Promise.resolve([]);
  let chunks = chunksByBatch.get(entries);
  if (!chunks) {
    try {
      chunks = chunksOf(script, entries);
    } catch (error) {
      return Promise.reject(error);
    }
    chunksByBatch.set(entries, chunks);
  }
  const held = new Array<boolean>(entries.length);
  return Promise.all(chunks.map((chunk) => script.run(client, chunk.keys, chunk.args, (reply) => readRenewals(reply, chunk.count, held, chunk.start)))).then(
    () => held,
  );
}

function chunksOf(script: LuaScript, entries: readonly ScriptRenewal[]): Chunk[] {
  const perHolder = (entries[0] as ScriptRenewal).args.length;
  // Each holder keeps one argument of its own at least (its value): the script finds where one ends by them.
  if (perHolder === 0) throw new Error(`${script.name}: a holder's renewal takes its value at least`);
  for (const entry of entries) {
    if (entry.args.length !== perHolder) throw new Error(`${script.name}: every holder takes ${perHolder} arguments, one has ${entry.args.length}`);
  }
  const chunks: Chunk[] = [];
  for (let start = 0; start < entries.length; start += RENEWALS_PER_CALL) {
    const end = Math.min(entries.length, start + RENEWALS_PER_CALL);
    chunks.push(chunkOf(entries, start, end, perHolder));
  }
  return chunks;
}

/**
 * One call's keys and arguments (renewEach.lua's layout). The arguments that
 * end every holder's list alike (the usual batch's TTL, a semaphore's limit)
 * go once, and the key count once when every holder has as many keys: with
 * ten thousand permits, each of a holder's arguments is framed by the client
 * once per node.
 */
function chunkOf(entries: readonly ScriptRenewal[], start: number, end: number, perHolder: number): Chunk {
  const first = entries[start] as ScriptRenewal;
  let shared = perHolder;
  let keysEach = first.keys.length;
  for (let i = start + 1; i < end; i++) {
    const { keys, args } = entries[i] as ScriptRenewal;
    shared = sharedSuffix(first.args, args, shared);
    if (keys.length !== keysEach) keysEach = 0;
  }
  // A holder keeps at least its first argument (its value): the script counts holders by their own arguments.
  shared = Math.min(shared, perHolder - 1);
  const own = perHolder - shared;
  const keys: string[] = [];
  const args: (string | number)[] = [own, shared, keysEach, ...first.args.slice(own)];
  for (let i = start; i < end; i++) {
    const entry = entries[i] as ScriptRenewal;
    for (const key of entry.keys) keys.push(key);
    if (keysEach === 0) args.push(entry.keys.length);
    for (let a = 0; a < own; a++) args.push(entry.args[a] as string | number);
  }
  return { keys, args, start, count: end - start };
}

/** How many of the last `upTo` arguments `a` and `b` have alike, counted from the end. */
function sharedSuffix(a: readonly (string | number)[], b: readonly (string | number)[], upTo: number): number {
  let alike = 0;
  while (alike < upTo && a[a.length - 1 - alike] === b[b.length - 1 - alike]) alike++;
  return alike;
}
