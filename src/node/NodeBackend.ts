/**
 * The lock operations one node performs, with no timeout and no bookkeeping.
 * RedisNodeBackend runs them as Lua scripts on an ioredis client; the property
 * tests run them on a simulated node instead.
 */
export interface NodeBackend {
  readonly name: string;
  /** True when every key now holds `value`; false when any holds another value. */
  acquire(keys: readonly string[], value: string, ttlMs: number): Promise<boolean>;
  /** True when every key still held `value` and got the new TTL. */
  extend(keys: readonly string[], value: string, ttlMs: number): Promise<boolean>;
  /** How many keys still held `value` and were deleted. */
  release(keys: readonly string[], value: string): Promise<number>;
  /** Throws InvalidArgumentError when the keys cannot be locked together here. */
  checkKeys?(keys: readonly string[], argument: string): void;
}
