/**
 * One node's data in memory: string and sorted-set keys with per-key expiry
 * on an injected clock, and the commands quorumlock's scripts and its
 * clients send, with Redis's replies and errors (checked against a real
 * redis-server by test/property/luaNode.test.ts). A key is gone once its
 * expiry instant is reached; TIME reads the server clock in microseconds,
 * strictly increasing from call to call, as leases and handoff stamps
 * compare them.
 */
import type { Clock } from '../../clock/Clock.js';
import { errorReply, formatLuaNumber, OK, type Reply } from '../lua/replies.js';

type Value = { readonly type: 'string'; readonly value: string } | { readonly type: 'zset'; readonly members: Map<string, number> };

interface Entry {
  value: Value;
  /** Node-clock instant at which the key is gone; Infinity without a TTL. */
  expiresAt: number;
}

/** A string key written or deleted by a command, with its value before and after (undefined: missing). */
export interface StringChange {
  /** The key's name. */
  readonly key: string;
  /** Its value before the request (undefined: missing). */
  readonly before: string | undefined;
  /** Its value after the request (undefined: deleted or missing). */
  after: string | undefined;
}

/** Delivers a PUBLISH to the node's subscribers; answers how many received it. */
export type Publisher = (channel: string, message: string) => number;

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';
const NOT_INTEGER = 'ERR value is not an integer or out of range';
const NOT_FLOAT = 'ERR value is not a valid float';
const SYNTAX = 'ERR syntax error';
const MIN_MAX_NOT_FLOAT = 'ERR min or max is not a float';

export class Keyspace {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  /** The clock TIME and the scripts' server time are read from (by default the expiry clock). */
  serverTime: Clock;
  #lastServerUs = 0;
  #publish: Publisher;
  #changes: StringChange[] | undefined;

  constructor(clock: Clock, publish: Publisher) {
    this.#clock = clock;
    this.serverTime = clock;
    this.#publish = publish;
  }

  /** Runs one command (its name in any case, then its arguments). */
  command(args: readonly string[]): Reply {
    const name = (args[0] ?? '').toUpperCase();
    const run = COMMANDS[name];
    if (run === undefined) return errorReply(`ERR unknown command '${args[0] ?? ''}', with args beginning with: ${args.slice(1, 3).map((a) => `'${a}'`).join(' ')}`);
    const [min, max] = run.arity;
    if (args.length - 1 < min || args.length - 1 > max) return errorReply(`ERR wrong number of arguments for '${name.toLowerCase()}' command`);
    return run.run.call(this, args.slice(1));
  }

  /** Records the string keys that `work` writes or deletes, with their values before and after. */
  tracking<T>(work: () => T): { result: T; changes: readonly StringChange[] } {
    const outer = this.#changes;
    const changes: StringChange[] = [];
    this.#changes = changes;
    try {
      return { result: work(), changes };
    } finally {
      this.#changes = outer;
    }
  }

  /** The live string value at `key`, or undefined (missing, expired or not a string). */
  get(key: string): string | undefined {
    const value = this.#live(key)?.value;
    return value?.type === 'string' ? value.value : undefined;
  }

  /** Milliseconds left, exactly (fractions of the clock kept); -1 without a TTL, -2 missing. */
  pttl(key: string): number {
    const entry = this.#live(key);
    if (entry === undefined) return -2;
    return entry.expiresAt === Infinity ? -1 : entry.expiresAt - this.#clock.now();
  }

  /** The members of the sorted set at `key` with their scores, ZRANGE's order; empty when missing. */
  sortedSet(key: string): [member: string, score: number][] {
    const value = this.#live(key)?.value;
    return value?.type === 'zset' ? sortMembers(value.members) : [];
  }

  /** Every live key's name. */
  keys(): string[] {
    return [...this.#entries.keys()].filter((key) => this.#live(key) !== undefined);
  }

  /** Every key gone (a restart without persistence, FLUSHALL). */
  clear(): void {
    this.#entries.clear();
  }

  /** TIME in µs on the server clock: strictly increasing, as a handoff's stamp is compared with it. */
  serverUs(): number {
    this.#lastServerUs = Math.max(this.#lastServerUs + 1, Math.floor(this.serverTime.now() * 1000));
    return this.#lastServerUs;
  }

  // --- what the commands share ---------------------------------------------------

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#clock.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #note(key: string, before: string | undefined): StringChange | undefined {
    const changes = this.#changes;
    if (changes === undefined) return undefined;
    let change = changes.find((c) => c.key === key);
    if (change === undefined) {
      change = { key, before, after: before };
      changes.push(change);
    }
    return change;
  }

  #stringBefore(key: string): string | undefined {
    return this.get(key);
  }

  #setString(key: string, value: string, expiresAt: number): void {
    const change = this.#note(key, this.#stringBefore(key));
    this.#entries.set(key, { value: { type: 'string', value }, expiresAt });
    if (change) change.after = value;
  }

  #delete(key: string): boolean {
    const entry = this.#live(key);
    if (entry === undefined) return false;
    const change = entry.value.type === 'string' ? this.#note(key, entry.value.value) : undefined;
    this.#entries.delete(key);
    if (change) change.after = undefined;
    return true;
  }

  #zset(key: string): Map<string, number> | undefined | typeof WRONGTYPE {
    const value = this.#live(key)?.value;
    if (value === undefined) return undefined;
    return value.type === 'zset' ? value.members : WRONGTYPE;
  }

  /** An emptied sorted set does not exist in Redis, nor does its TTL. */
  #dropIfEmpty(key: string, members: Map<string, number>): void {
    if (members.size === 0) this.#entries.delete(key);
  }

  // --- the commands ------------------------------------------------------------------

  type_(key: string): Reply {
    return { status: this.#live(key)?.value.type ?? 'none' };
  }

  get_(key: string): Reply {
    const value = this.#live(key)?.value;
    if (value === undefined) return null;
    return value.type === 'string' ? value.value : errorReply(WRONGTYPE);
  }

  set_(key: string, value: string, options: readonly string[]): Reply {
    let nx = false;
    let xx = false;
    let keepTtl = false;
    let ttlMs: number | undefined;
    for (let i = 0; i < options.length; i++) {
      const option = (options[i] as string).toUpperCase();
      if (option === 'NX' && !xx) nx = true;
      else if (option === 'XX' && !nx) xx = true;
      else if (option === 'KEEPTTL' && ttlMs === undefined) keepTtl = true;
      else if ((option === 'PX' || option === 'EX') && ttlMs === undefined && !keepTtl && i + 1 < options.length) {
        const amount = parseInteger(options[++i] as string);
        if (amount === undefined) return errorReply(NOT_INTEGER);
        if (amount <= 0) return errorReply("ERR invalid expire time in 'set' command");
        ttlMs = option === 'PX' ? amount : amount * 1000;
      } else return errorReply(SYNTAX);
    }
    const current = this.#live(key);
    if ((nx && current !== undefined) || (xx && current === undefined)) return null;
    const expiresAt = ttlMs !== undefined ? this.#clock.now() + ttlMs : keepTtl && current ? current.expiresAt : Infinity;
    this.#setString(key, value, expiresAt);
    return OK;
  }

  del_(keys: readonly string[]): Reply {
    let deleted = 0;
    for (const key of keys) if (this.#delete(key)) deleted++;
    return deleted;
  }

  exists_(keys: readonly string[]): Reply {
    return keys.filter((key) => this.#live(key) !== undefined).length;
  }

  pexpire_(key: string, amount: string, options: readonly string[]): Reply {
    const ms = parseInteger(amount);
    if (ms === undefined) return errorReply(NOT_INTEGER);
    const flags = options.map((option) => option.toUpperCase());
    if (flags.some((flag) => !['NX', 'XX', 'GT', 'LT'].includes(flag))) return errorReply(`ERR Unsupported option ${options[0]}`);
    const entry = this.#live(key);
    if (entry === undefined) return 0;
    const at = this.#clock.now() + ms;
    const has = entry.expiresAt !== Infinity;
    if (flags.includes('NX') && has) return 0;
    if (flags.includes('XX') && !has) return 0;
    if (flags.includes('GT') && (!has || at <= entry.expiresAt)) return 0;
    if (flags.includes('LT') && has && at >= entry.expiresAt) return 0;
    if (ms <= 0) {
      this.#delete(key);
      return 1;
    }
    entry.expiresAt = at;
    if (entry.value.type === 'string') this.#note(key, entry.value.value);
    return 1;
  }

  pttl_(key: string): Reply {
    const left = this.pttl(key);
    return left < 0 ? left : Math.round(left);
  }

  append_(key: string, suffix: string): Reply {
    const entry = this.#live(key);
    if (entry !== undefined && entry.value.type !== 'string') return errorReply(WRONGTYPE);
    const value = (entry?.value.type === 'string' ? entry.value.value : '') + suffix;
    this.#setString(key, value, entry?.expiresAt ?? Infinity);
    return Buffer.byteLength(value);
  }

  incr_(key: string): Reply {
    const entry = this.#live(key);
    if (entry !== undefined && entry.value.type !== 'string') return errorReply(WRONGTYPE);
    const current = entry?.value.type === 'string' ? parseInteger(entry.value.value) : 0;
    if (current === undefined) return errorReply(NOT_INTEGER);
    const next = current + 1;
    this.#setString(key, String(next), entry?.expiresAt ?? Infinity);
    return next;
  }

  time_(): Reply {
    const us = this.serverUs();
    return [String(Math.floor(us / 1_000_000)), String(us % 1_000_000)];
  }

  publish_(channel: string, message: string): Reply {
    return this.#publish(channel, message);
  }

  zadd_(key: string, rest: readonly string[]): Reply {
    const flags = new Set<string>();
    let i = 0;
    while (i < rest.length && ['NX', 'XX', 'GT', 'LT', 'CH'].includes((rest[i] as string).toUpperCase())) flags.add((rest[i++] as string).toUpperCase());
    const pairs = rest.slice(i);
    if (pairs.length === 0 || pairs.length % 2 !== 0) return errorReply(SYNTAX);
    if (flags.has('NX') && (flags.has('XX') || flags.has('GT') || flags.has('LT'))) return errorReply('ERR XX and NX options at the same time are not compatible');
    const scores: [number, string][] = [];
    for (let p = 0; p < pairs.length; p += 2) {
      const score = parseScore(pairs[p] as string);
      if (score === undefined) return errorReply(NOT_FLOAT);
      scores.push([score, pairs[p + 1] as string]);
    }
    let members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    if (members === undefined) {
      if (flags.has('XX')) return 0;
      members = new Map();
      this.#entries.set(key, { value: { type: 'zset', members }, expiresAt: Infinity });
    }
    let added = 0;
    let changed = 0;
    for (const [score, member] of scores) {
      const old = members.get(member);
      if (old === undefined) {
        if (flags.has('XX')) continue;
        members.set(member, score);
        added++;
      } else {
        if (flags.has('NX') || (flags.has('GT') && score <= old) || (flags.has('LT') && score >= old)) continue;
        if (old !== score) changed++;
        members.set(member, score);
      }
    }
    this.#dropIfEmpty(key, members);
    return flags.has('CH') ? added + changed : added;
  }

  zscore_(key: string, member: string): Reply {
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    const score = members?.get(member);
    return score === undefined ? null : formatLuaNumber(score);
  }

  zrem_(key: string, removed: readonly string[]): Reply {
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    if (members === undefined) return 0;
    let count = 0;
    for (const member of removed) if (members.delete(member)) count++;
    this.#dropIfEmpty(key, members);
    return count;
  }

  zcard_(key: string): Reply {
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    return members?.size ?? 0;
  }

  zcount_(key: string, min: string, max: string): Reply {
    const range = parseRange(min, max);
    if (range === undefined) return errorReply(MIN_MAX_NOT_FLOAT);
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    let count = 0;
    for (const score of members?.values() ?? []) if (range(score)) count++;
    return count;
  }

  zremrangebyscore_(key: string, min: string, max: string): Reply {
    const range = parseRange(min, max);
    if (range === undefined) return errorReply(MIN_MAX_NOT_FLOAT);
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    if (members === undefined) return 0;
    let count = 0;
    for (const [member, score] of members) {
      if (!range(score)) continue;
      members.delete(member);
      count++;
    }
    this.#dropIfEmpty(key, members);
    return count;
  }

  zrange_(key: string, start: string, stop: string, options: readonly string[]): Reply {
    const from = parseInteger(start);
    const to = parseInteger(stop);
    if (from === undefined || to === undefined) return errorReply(NOT_INTEGER);
    const withScores = options.length === 1 && (options[0] as string).toUpperCase() === 'WITHSCORES';
    if (options.length > 0 && !withScores) return errorReply(SYNTAX);
    const members = this.#zset(key);
    if (members === WRONGTYPE) return errorReply(WRONGTYPE);
    const sorted = members === undefined ? [] : sortMembers(members);
    const size = sorted.length;
    const first = Math.max(0, from < 0 ? size + from : from);
    const last = Math.min(size - 1, to < 0 ? size + to : to);
    const reply: string[] = [];
    for (let i = first; i <= last; i++) {
      const [member, score] = sorted[i] as [string, number];
      reply.push(member);
      if (withScores) reply.push(formatLuaNumber(score));
    }
    return reply;
  }
}

interface Command {
  /** Arguments after the name: at least, at most. */
  readonly arity: readonly [number, number];
  readonly run: (this: Keyspace, args: readonly string[]) => Reply;
}

const MANY = Number.POSITIVE_INFINITY;
const a = (args: readonly string[], i: number): string => args[i] as string;

/** The commands the node serves, by name; anything else is an unknown command, as on a server that lacks it. */
const COMMANDS: Readonly<Record<string, Command>> = {
  GET: { arity: [1, 1], run(args) { return this.get_(a(args, 0)); } },
  TYPE: { arity: [1, 1], run(args) { return this.type_(a(args, 0)); } },
  SET: { arity: [2, MANY], run(args) { return this.set_(a(args, 0), a(args, 1), args.slice(2)); } },
  DEL: { arity: [1, MANY], run(args) { return this.del_(args); } },
  EXISTS: { arity: [1, MANY], run(args) { return this.exists_(args); } },
  PEXPIRE: { arity: [2, 3], run(args) { return this.pexpire_(a(args, 0), a(args, 1), args.slice(2)); } },
  PTTL: { arity: [1, 1], run(args) { return this.pttl_(a(args, 0)); } },
  APPEND: { arity: [2, 2], run(args) { return this.append_(a(args, 0), a(args, 1)); } },
  INCR: { arity: [1, 1], run(args) { return this.incr_(a(args, 0)); } },
  TIME: { arity: [0, 0], run() { return this.time_(); } },
  PUBLISH: { arity: [2, 2], run(args) { return this.publish_(a(args, 0), a(args, 1)); } },
  ZADD: { arity: [3, MANY], run(args) { return this.zadd_(a(args, 0), args.slice(1)); } },
  ZSCORE: { arity: [2, 2], run(args) { return this.zscore_(a(args, 0), a(args, 1)); } },
  ZREM: { arity: [2, MANY], run(args) { return this.zrem_(a(args, 0), args.slice(1)); } },
  ZCARD: { arity: [1, 1], run(args) { return this.zcard_(a(args, 0)); } },
  ZCOUNT: { arity: [3, 3], run(args) { return this.zcount_(a(args, 0), a(args, 1), a(args, 2)); } },
  ZREMRANGEBYSCORE: { arity: [3, 3], run(args) { return this.zremrangebyscore_(a(args, 0), a(args, 1), a(args, 2)); } },
  ZRANGE: { arity: [3, 4], run(args) { return this.zrange_(a(args, 0), a(args, 1), a(args, 2), args.slice(3)); } },
};

/** The names of the commands served (the allow-list test compares them with what the scripts send). */
export const SERVED_COMMANDS: readonly string[] = Object.keys(COMMANDS);

/** By score, ties by member in byte order (ZRANGE). */
function sortMembers(members: Map<string, number>): [string, number][] {
  return [...members].sort(([m, x], [n, y]) => x - y || (m < n ? -1 : m > n ? 1 : 0));
}

/** A whole decimal as Redis reads one (no sign but '-', no leading zeros, no spaces), within 64 bits as far as JS counts. */
function parseInteger(text: string): number | undefined {
  if (!/^-?(0|[1-9][0-9]*)$/.test(text) || text === '-0') return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

function parseScore(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (text.trim() !== text || text === '') return undefined;
  const value = Number(text);
  return Number.isNaN(value) ? undefined : value;
}

/** ZCOUNT's and ZREMRANGEBYSCORE's bounds: '(' makes one exclusive. */
function parseRange(min: string, max: string): ((score: number) => boolean) | undefined {
  const low = parseBound(min);
  const high = parseBound(max);
  if (low === undefined || high === undefined) return undefined;
  return (score) => (low.open ? score > low.value : score >= low.value) && (high.open ? score < high.value : score <= high.value);
}

function parseBound(text: string): { value: number; open: boolean } | undefined {
  const open = text.startsWith('(');
  const value = parseScore(open ? text.slice(1) : text);
  return value === undefined ? undefined : { value, open };
}
