/**
 * A protected resource that refuses writes carrying a smaller fencing token
 * than it has seen: the check-and-set at the resource that makes a lock safe
 * against holders that paused past their validity.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

const FENCED_WRITE_LUA = readFileSync(new URL('./lua/fencedWrite.lua', import.meta.url), 'utf8');

export class FencedStore {
  constructor(
    private readonly redis: Redis,
    private readonly name: string,
  ) {}

  /** True when the write was applied, false when it was refused as stale. */
  async write(token: bigint, data: string): Promise<boolean> {
    const reply = await this.redis.eval(FENCED_WRITE_LUA, 2, this.name, `${this.name}:token`, token.toString(), data);
    return reply === 1;
  }

  read(): Promise<string | null> {
    return this.redis.get(this.name);
  }
}
