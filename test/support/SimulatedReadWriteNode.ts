/**
 * One node's read-write lock keys in memory, as rwRead.lua, rwReadExtend.lua,
 * rwReadRelease.lua and rwWrite.lua treat them, with the writer key's
 * extend and release being the mutex's: string keys and a sorted set with
 * TTLs, and readers' leases scored by the node's own time (advance()).
 * test/property/readWriteScripts checks it against the scripts on a real
 * redis-server.
 */
interface Entry {
  value: string;
  expiresAt: number;
}

export interface ReadWriteKeys {
  readonly writer: string;
  readonly readers: string;
  readonly claim: string;
  readonly fencing: string;
}

export class SimulatedReadWriteNode {
  readonly #strings = new Map<string, Entry>();
  /** The readers' set: member -> when its lease ends; the set's own TTL apart. */
  readonly #readers = new Map<string, number>();
  #readersExpireAt = Infinity;
  /** Fencing counters: no TTL, as acquire.lua and rwWrite.lua leave them. */
  readonly #counters = new Map<string, bigint>();
  readonly #keys: ReadWriteKeys;
  #now: number;

  /** `startMs`: the node's time at the start, in ms (the scripts' server_time). */
  constructor(keys: ReadWriteKeys, startMs: number) {
    this.#keys = keys;
    this.#now = startMs;
  }

  advance(ms: number): void {
    this.#now += ms;
    for (const [key, entry] of this.#strings) if (entry.expiresAt <= this.#now) this.#strings.delete(key);
    if (this.#readersExpireAt <= this.#now) this.#dropReaders();
  }

  get(key: string): string | null {
    if (key === this.#keys.fencing) return this.#counters.get(key)?.toString() ?? null;
    return this.#strings.get(key)?.value ?? null;
  }

  /** -2 missing, -1 no TTL, else the milliseconds left. */
  pttl(key: string): number {
    if (key === this.#keys.readers) {
      if (this.#readers.size === 0) return -2;
      return this.#readersExpireAt === Infinity ? -1 : this.#readersExpireAt - this.#now;
    }
    if (key === this.#keys.fencing) return this.#counters.has(key) ? -1 : -2;
    const entry = this.#strings.get(key);
    return entry === undefined ? -2 : entry.expiresAt - this.#now;
  }

  /** The readers' set as ZRANGE WITHSCORES gives it: by score, then member. */
  readerLeases(): [member: string, endsAt: number][] {
    return [...this.#readers].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0));
  }

  /** rwRead.lua: 1 added, 0 a writer holds or claims the resource. */
  read(value: string, ttlMs: number): number {
    this.#pruneReaders();
    if (this.#strings.has(this.#keys.writer) || this.#strings.has(this.#keys.claim)) return 0;
    this.#addReader(value, ttlMs);
    return 1;
  }

  /** rwReadExtend.lua: 1 when `value` now holds a reader's lease of `ttlMs` (a writer downgrades), else 0. */
  readExtend(value: string, ttlMs: number): number {
    this.#pruneReaders();
    if (!this.#readers.has(value)) {
      if (this.get(this.#keys.writer) !== value) return 0;
      this.#strings.delete(this.#keys.writer);
    }
    this.#addReader(value, ttlMs);
    return 1;
  }

  /** rwReadRelease.lua: 1 removed, 0 no such lease. */
  readRelease(value: string): number {
    if (!this.#readers.delete(value)) return 0;
    // rwReadRelease.lua prunes the ended leases before it decides whether to
    // wake a writer, and only when one may wait: a writer's claim stands (or
    // the writers' wait line exists, which no command here makes). Waking
    // that claimant only publishes.
    if (this.get(this.#keys.claim) !== null) this.#pruneReaders();
    else if (this.#readers.size === 0) this.#dropReaders();
    return 1;
  }

  /** rwWrite.lua: 1 (or the token, with `fence`) when the writer key is set, else 0. */
  write(value: string, ttlMs: number, claimMs: number, fence: boolean): number | bigint {
    this.#pruneReaders();
    const claimant = this.get(this.#keys.claim);
    if (claimant !== null && claimant !== value) return 0;
    if (this.#strings.has(this.#keys.writer) || this.#readers.size > 0) {
      this.#set(this.#keys.claim, value, claimMs);
      return 0;
    }
    this.#set(this.#keys.writer, value, ttlMs);
    if (claimant !== null) this.#strings.delete(this.#keys.claim);
    if (!fence) return 1;
    const nowUs = BigInt(this.#now) * 1000n;
    let token = (this.#counters.get(this.#keys.fencing) ?? 0n) + 1n;
    if (token < nowUs) token = nowUs;
    this.#counters.set(this.#keys.fencing, token);
    return token;
  }

  /** The mutex's extend on the writer key: 1 when it held `value` and now lives `ttlMs`. */
  writeExtend(value: string, ttlMs: number): number {
    if (this.get(this.#keys.writer) !== value) return 0;
    this.#set(this.#keys.writer, value, ttlMs);
    return 1;
  }

  /** The mutex's plain release on the writer key: how many keys it deleted. */
  writeRelease(value: string): number {
    if (this.get(this.#keys.writer) !== value) return 0;
    this.#strings.delete(this.#keys.writer);
    return 1;
  }

  #pruneReaders(): void {
    for (const [member, endsAt] of this.#readers) if (endsAt <= this.#now) this.#readers.delete(member);
    if (this.#readers.size === 0) this.#dropReaders();
  }

  #addReader(value: string, ttlMs: number): void {
    this.#readers.set(value, this.#now + ttlMs);
    if (this.pttl(this.#keys.readers) < ttlMs) this.#readersExpireAt = this.#now + ttlMs;
  }

  /** An empty sorted set does not exist in Redis, nor does its TTL. */
  #dropReaders(): void {
    this.#readers.clear();
    this.#readersExpireAt = Infinity;
  }

  #set(key: string, value: string, ttlMs: number): void {
    this.#strings.set(key, { value, expiresAt: this.#now + ttlMs });
  }
}
