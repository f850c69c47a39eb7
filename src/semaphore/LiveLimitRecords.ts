import type { Clock } from '../clock/Clock.js';
import { type DriftSettings, driftFor, validUntil } from '../clock/validity.js';

/** Resources remembered per node; past it, the expired go first, then the oldest. */
export const MAX_RECORDS_PER_NODE = 1024;

/**
 * Until when each node's limit record of a resource is known to live, on the
 * client's clock: from the record's TTL that an acquire script answered,
 * counted from before the script was sent, minus drift. A record is only
 * ever lengthened (a script rewrites it only when no more than the caller's
 * TTL is left, to twice that TTL) and leaves a node only by expiry (or a
 * restart, which loses it in any case).
 * So while a slot taken now would expire before the record, that record
 * needs no reading: it holds our limit for the slot's whole life, and a
 * caller with another limit is refused by it meanwhile. Then a plain
 * `SET NX PX` of the slot is the whole acquire, as a mutex's is.
 * Pure bookkeeping, no I/O.
 */
export class LiveLimitRecords {
  readonly #byNode = new WeakMap<object, Map<string, number>>();
  readonly #clock: Clock;
  readonly #drift: DriftSettings;

  constructor(clock: Clock, drift: DriftSettings) {
    this.#clock = clock;
    this.#drift = drift;
  }

  /**
   * Whether a slot of `ttlMs` whose write is seen done `answerMs` from now
   * expires, drift counted, before `node`'s record `record` does. Called
   * before sending (with the request's timeout) and again on the answer
   * (with 0): the write ran before its answer came back.
   */
  outlives(node: object, record: string, ttlMs: number, answerMs: number): boolean {
    const until = this.#byNode.get(node)?.get(record);
    return until !== undefined && this.#clock.now() + answerMs + ttlMs + driftFor(ttlMs, this.#drift) <= until;
  }

  /** A script sent at `sentAt` answered that `node`'s record lives `recordMs` more. */
  note(node: object, record: string, sentAt: number, recordMs: number): void {
    let records = this.#byNode.get(node);
    if (!records) {
      records = new Map();
      this.#byNode.set(node, records);
    }
    records.delete(record);
    if (records.size >= MAX_RECORDS_PER_NODE) forgetSome(records, this.#clock.now());
    records.set(record, validUntil(recordMs, sentAt, this.#drift));
  }

  /** Forgets `node`'s record of `record`: its next acquire reads it again. */
  forget(node: object, record: string): void {
    this.#byNode.get(node)?.delete(record);
  }
}

/** The expired records, or if none, the one noted longest ago (a Map keeps insertion order). */
function forgetSome(records: Map<string, number>, now: number): void {
  for (const [record, until] of records) if (until <= now) records.delete(record);
  if (records.size < MAX_RECORDS_PER_NODE) return;
  const oldest = records.keys().next();
  if (!oldest.done) records.delete(oldest.value);
}
