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

/**
 * Renews every entry with `script` (built by renewEachScript), one call per
 * RENEWALS_PER_CALL entries, sent back to back: true or false per entry, in
 * order. Every entry has as many arguments as the first; all the keys of one
 * call must be on one node (one hash slot on a Cluster).
 */
export function renewEach(client: ScriptClient, script: LuaScript, entries: readonly ScriptRenewal[]): Promise<boolean[]> {
  if (entries.length === 0) return Promise.resolve([]);
  const held = new Array<boolean>(entries.length);
  const perHolder = (entries[0] as ScriptRenewal).args.length;
  const calls: Promise<boolean[]>[] = [];
  for (let start = 0; start < entries.length; start += RENEWALS_PER_CALL) {
    const end = Math.min(entries.length, start + RENEWALS_PER_CALL);
    const keys: string[] = [];
    const args: (string | number)[] = [perHolder];
    for (let i = start; i < end; i++) {
      const entry = entries[i] as ScriptRenewal;
      if (entry.args.length !== perHolder) return Promise.reject(new Error(`${script.name}: every holder takes ${perHolder} arguments, one has ${entry.args.length}`));
      for (const key of entry.keys) keys.push(key);
      args.push(entry.keys.length);
      for (const arg of entry.args) args.push(arg);
    }
    calls.push(script.run(client, keys, args, (reply) => readRenewals(reply, end - start, held, start)));
  }
  return Promise.all(calls).then(() => held);
}
