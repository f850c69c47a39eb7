/**
 * Emulates a Redis node whose clock runs fast (libfaketime does not work with
 * Debian's redis-server, see design.md): every `intervalMs` it takes
 * `elapsed * (rate - 1)` ms off the remaining TTL of every key on that node
 * (lua/skew.lua), so keys expire as early as a node counting time `rate`
 * times too fast would expire them. jump(ms) does it once, at once.
 *
 *   const nemesis = new SkewNemesis(clientToNode, { rate: 1.5, match: 'lock:*' });
 *   nemesis.start();
 *   ...
 *   await nemesis.jump(2_000);   // the node's clock jumps 2 s forward
 *   await nemesis.stop();
 *
 * Use a client of its own (not one a test pauses or blackholes). Errors (node
 * killed or paused) are counted and the nemesis carries on.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';

const SKEW_LUA = readFileSync(new URL('./lua/skew.lua', import.meta.url), 'utf8');

export interface SkewNemesisOptions {
  /** How fast the node's clock runs: 1.5 = 50% fast; 1 = no skew; < 1 = slow. */
  readonly rate: number;
  /** Period of the adjustments in ms (default 5). */
  readonly intervalMs?: number;
  /** Only keys matching this SCAN pattern (default '*'). */
  readonly match?: string;
  /** SCAN COUNT hint (default 1000). */
  readonly scanCount?: number;
}

export interface SkewResult {
  /** Keys whose TTL was changed. */
  readonly adjusted: number;
  /** Keys deleted because their TTL reached <= 0. */
  readonly deleted: number;
}

const STOP_WAIT_MS = 1000;

export class SkewNemesis {
  private readonly client: Redis;
  private readonly rate: number;
  private readonly intervalMs: number;
  private readonly match: string;
  private readonly scanCount: number;

  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private active = false;
  private lastAt = 0;
  private carryMs = 0;
  private shiftedMs = 0;
  private errorCount = 0;
  private latestError: unknown;

  constructor(client: Redis, options: SkewNemesisOptions) {
    if (!Number.isFinite(options.rate) || options.rate < 0) {
      throw new RangeError(`SkewNemesis: rate must be a finite number >= 0, got ${options.rate}`);
    }
    this.client = client;
    this.rate = options.rate;
    this.intervalMs = options.intervalMs ?? 5;
    this.match = options.match ?? '*';
    this.scanCount = options.scanCount ?? 1000;
  }

  get running(): boolean {
    return this.active;
  }

  /** Total ms taken off TTLs so far (ticks and jumps): how far the node's clock is ahead. */
  get totalShiftedMs(): number {
    return this.shiftedMs;
  }

  /** Failed adjustments (e.g. node down), and the last such error. */
  get errors(): number {
    return this.errorCount;
  }

  get lastError(): unknown {
    return this.latestError;
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.lastAt = performance.now();
    this.carryMs = 0;
    this.schedule();
  }

  /** Stop ticking; waits (boundedly) for an adjustment in flight. */
  async stop(): Promise<void> {
    this.active = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const inFlight = this.inFlight;
    if (inFlight === undefined) return;
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([inFlight, new Promise<void>((resolve) => (guard = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(guard);
  }

  /** Take `ms` off every (matching) key's TTL at once; keys that would reach <= 0 are deleted. */
  async jump(ms: number): Promise<SkewResult> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`SkewNemesis.jump: ms must be >= 0, got ${ms}`);
    const whole = Math.round(ms);
    const result = await this.shift(whole);
    this.shiftedMs += whole;
    return result;
  }

  private schedule(): void {
    if (!this.active) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
    }, this.intervalMs);
  }

  private async tick(): Promise<void> {
    const now = performance.now();
    this.carryMs += (now - this.lastAt) * (this.rate - 1);
    this.lastAt = now;
    const whole = Math.trunc(this.carryMs); // PEXPIRE takes whole ms; keep the fraction for later
    if (whole === 0) return;
    this.carryMs -= whole;
    try {
      await this.shift(whole);
      this.shiftedMs += whole;
    } catch (err) {
      this.errorCount += 1;
      this.latestError = err;
    }
  }

  private async shift(ms: number): Promise<SkewResult> {
    const reply = await this.client.eval(SKEW_LUA, 0, String(ms), this.match, String(this.scanCount));
    if (!Array.isArray(reply)) throw new Error(`skew.lua: unexpected reply ${String(reply)}`);
    return { adjusted: Number(reply[0]), deleted: Number(reply[1]) };
  }
}
