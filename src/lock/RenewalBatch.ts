import type { RenewalEntry } from '../scripts/extendMany.js';
import type { Grant } from '../shared/grant.js';

/**
 * Where a renewal's result goes: called back, not a promise. With ten
 * thousand locks, the promise per renewal and the then() chains behind it
 * (batch, Lock, auto-extender) were a large share of a renewal's CPU and
 * garbage, each promise paying the async hooks that AsyncLocalStorage turns on.
 */
export interface RenewalAnswer {
  readonly resolve: (grant: Grant) => void;
  readonly reject: (error: unknown) => void;
}

/** One lock's renewal waiting in a batch, and how to answer it. */
export interface Renewal extends RenewalEntry {
  /** The validity the lock had when its renewal was asked for. */
  readonly remainingMs: number;
  readonly answer: RenewalAnswer;
}

/**
 * Gathers the renewals one locker is asked for in the same tick (the shared
 * timer runs every due renewal in one go) and hands them over together once
 * that tick's code has run: `send` then makes one request per node for all
 * of them, not one per lock.
 */
export class RenewalBatch {
  #pending: Renewal[] = [];
  readonly #send: (renewals: readonly Renewal[]) => void;

  constructor(send: (renewals: readonly Renewal[]) => void) {
    this.#send = send;
  }

  add(keys: readonly string[], value: string, ttlMs: number, remainingMs: number, answer: RenewalAnswer): void {
    if (this.#pending.length === 0) queueMicrotask(this.#flush);
    this.#pending.push({ keys, value, ttlMs, remainingMs, answer });
  }

  readonly #flush = (): void => {
    const renewals = this.#pending;
    this.#pending = [];
    try {
      this.#send(renewals);
    } catch (error) {
      for (const renewal of renewals) renewal.answer.reject(error);
    }
  };
}
