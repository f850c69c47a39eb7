import { chunksOnce, type RenewalChunk, runChunks } from './extendMany.js';
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

const chunksByBatch = new WeakMap<readonly ScriptRenewal[], readonly RenewalChunk[]>();

/**
 * Renews every entry with `script` (built by renewEachScript), one call per
 * RENEWALS_PER_CALL entries, sent back to back: true or false per entry, in
 * order. Every entry has as many arguments as the first, its value first;
 * all the keys of one call must be on one node (one hash slot on a Cluster).
 */
export function renewEach(client: ScriptClient, script: LuaScript, entries: readonly ScriptRenewal[]): Promise<boolean[]> {
  if (entries.length === 0) return Promise.resolve([]);
  const perHolder = (entries[0] as ScriptRenewal).args.length;
  let chunks: readonly RenewalChunk[];
  try {
    chunks = chunksOnce(chunksByBatch, entries, (start, end) => chunkOf(script, entries, start, end, perHolder));
  } catch (error) {
    return Promise.reject(error);
  }
  return runChunks(client, script, chunks, entries.length);
}

/**
 * One call's keys and arguments (renewEach.lua's layout). The arguments that
 * end every holder's list alike (the usual batch's TTL, a semaphore's limit)
 * go once, and the key count once when every holder has as many keys: with
 * ten thousand permits, each of a holder's arguments is framed by the client
 * once per node.
 */
function chunkOf(script: LuaScript, entries: readonly ScriptRenewal[], start: number, end: number, perHolder: number): RenewalChunk {
  // Each holder keeps one argument of its own at least (its value): the script finds where one ends by them.
  if (perHolder === 0) throw new Error(`${script.name}: a holder's renewal takes its value at least`);
  const first = entries[start] as ScriptRenewal;
  let shared = perHolder;
  let keysEach = first.keys.length;
  for (let i = start; i < end; i++) {
    const { keys, args } = entries[i] as ScriptRenewal;
    if (args.length !== perHolder) throw new Error(`${script.name}: every holder takes ${perHolder} arguments, one has ${args.length}`);
    shared = sharedSuffix(first.args, args, shared);
    if (keys.length !== keysEach) keysEach = 0;
  }
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
