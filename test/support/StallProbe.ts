import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';

/**
 * Watches, while a measurement runs, for this machine holding up this
 * process's event loop or a Redis server: a timer every `intervalMs` notes
 * how late it fires, and a PING on a client of its own how long the server
 * takes to answer (one in flight at a time; one still unanswered counts as
 * long as it has been out). A case that times a request against a bound of
 * the design can then tell an attempt the machine stalled past the design's
 * margin from one the library made slow, and measure only the second kind.
 *
 *   const probe = new StallProbe(client);
 *   probe.mark();
 *   await attempt();
 *   if (probe.worstMs() >= marginMs) ...   // the machine's, not the library's
 *   probe.stop();
 */
export class StallProbe {
  readonly #client: Redis;
  readonly #intervalMs: number;
  readonly #timer: NodeJS.Timeout;
  #expectedAt: number;
  #pingSentAt: number | undefined;
  #worst = 0;

  constructor(client: Redis, intervalMs = 10) {
    this.#client = client;
    this.#intervalMs = intervalMs;
    this.#expectedAt = performance.now() + intervalMs;
    this.#timer = setInterval(() => this.#tick(), intervalMs);
  }

  /** Starts a new measurement: worstMs() counts from here. */
  mark(): void {
    this.#worst = 0;
  }

  /** The longest stall seen since mark(): timer lateness or PING round trip, in ms. */
  worstMs(): number {
    this.#tick();
    return this.#worst;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#client.disconnect();
  }

  #tick(): void {
    const now = performance.now();
    if (now >= this.#expectedAt) {
      this.#note(now - this.#expectedAt);
      this.#expectedAt = now + this.#intervalMs;
    }
    if (this.#pingSentAt !== undefined) {
      this.#note(now - this.#pingSentAt);
      return;
    }
    const sentAt = now;
    this.#pingSentAt = sentAt;
    this.#client.ping().then(
      () => {
        this.#note(performance.now() - sentAt);
        this.#pingSentAt = undefined;
      },
      () => {
        this.#pingSentAt = undefined;
      },
    );
  }

  #note(ms: number): void {
    if (ms > this.#worst) this.#worst = ms;
  }
}
