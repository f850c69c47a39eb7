/**
 * One node's semaphore keys in memory, as semaphoreAcquire.lua,
 * semaphoreExtend.lua and the mutex's compare-and-delete release treat them:
 * string keys with a TTL counted on the node's own time (advance()). The
 * quorum search runs it by the thousand; test/property/semaphoreScripts
 * checks it against the scripts on a real redis-server.
 */
export class SimulatedSemaphoreNode {
  readonly #keys = new Map<string, { value: string; expiresAt: number }>();
  #now = 0;

  advance(ms: number): void {
    this.#now += ms;
    for (const [key, entry] of this.#keys) if (entry.expiresAt <= this.#now) this.#keys.delete(key);
  }

  get(key: string): string | null {
    return this.#keys.get(key)?.value ?? null;
  }

  /** -2 missing, else the milliseconds left (every key here has a TTL). */
  pttl(key: string): number {
    const entry = this.#keys.get(key);
    return entry === undefined ? -2 : entry.expiresAt - this.#now;
  }

  /**
   * semaphoreAcquire.lua: 1 taken, 0 a slot held, -recorded on another limit;
   * probing with `allSlots` (every slot of the resource), 2 when a slot is
   * held and fewer than `slots` of them are free.
   */
  acquire(keys: readonly string[], value: string, ttlMs: number, limit: number, allSlots?: readonly string[]): number {
    const [limitKey, ...slots] = keys as [string, ...string[]];
    const recorded = this.get(limitKey);
    if (recorded !== null && recorded !== String(limit)) return -Number(recorded);
    if (slots.some((slot) => this.#keys.has(slot))) {
      if (allSlots === undefined) return 0;
      return allSlots.filter((slot) => !this.#keys.has(slot)).length >= slots.length ? 0 : 2;
    }
    for (const slot of slots) this.#set(slot, value, ttlMs);
    if (this.pttl(limitKey) <= ttlMs) this.#set(limitKey, String(limit), 2 * ttlMs);
    return 1;
  }

  /**
   * semaphoreTake.lua without a line: `order` is every slot of the resource;
   * takes `permits` of them, first those reserved for `value` (its value and
   * '~', or its value), then free ones in order, all or none. Returns the
   * chosen slots' positions among the keys (2-based), 2 when too few are
   * free, -recorded on another limit.
   */
  take(limitKey: string, order: readonly string[], value: string, ttlMs: number, limit: number, permits: number): number[] | number {
    const recorded = this.get(limitKey);
    if (recorded !== null && recorded !== String(limit)) return -Number(recorded);
    const own: number[] = [];
    const free: number[] = [];
    order.forEach((slot, index) => {
      const current = this.get(slot);
      if (current === `${value}~` || current === value) own.push(index + 2);
      else if (current === null) free.push(index + 2);
    });
    if (own.length + free.length < permits) return 2;
    const chosen = [...own, ...free].slice(0, permits);
    for (const position of chosen) this.#set(order[position - 2] as string, value, ttlMs);
    if (this.pttl(limitKey) <= ttlMs) this.#set(limitKey, String(limit), 2 * ttlMs);
    for (const position of own.slice(permits)) this.#keys.delete(order[position - 2] as string);
    return chosen;
  }

  /** What semaphoreRelease.lua's handoff leaves on a slot it hands to `waiter`: a reservation for `reservationMs`. */
  reserve(slot: string, waiter: string, reservationMs: number): void {
    this.#set(slot, `${waiter}~`, reservationMs);
  }

  /** semaphoreExtend.lua: 1 when every slot still held `value` and was extended, else 0. */
  extend(keys: readonly string[], value: string, ttlMs: number, limit: number): number {
    const [limitKey, ...slots] = keys as [string, ...string[]];
    const recorded = this.get(limitKey);
    if (recorded !== null && recorded !== String(limit)) return 0;
    if (slots.some((slot) => this.get(slot) !== value)) return 0;
    for (const slot of slots) this.#set(slot, value, ttlMs);
    if (this.pttl(limitKey) <= ttlMs) this.#set(limitKey, String(limit), 2 * ttlMs);
    return 1;
  }

  /** The mutex's plain release: deletes the keys that hold `value`, returns how many. */
  release(keys: readonly string[], value: string): number {
    let released = 0;
    for (const key of new Set(keys)) {
      if (this.get(key) === value) {
        this.#keys.delete(key);
        released++;
      }
    }
    return released;
  }

  /** Every key and its value, for comparing with a real node. */
  snapshot(): Record<string, string> {
    return Object.fromEntries([...this.#keys].map(([key, entry]) => [key, entry.value]).sort());
  }

  #set(key: string, value: string, ttlMs: number): void {
    this.#keys.set(key, { value, expiresAt: this.#now + ttlMs });
  }
}
