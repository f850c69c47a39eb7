import type { Grant } from './grant.js';

/**
 * A handed-off lock's claim of its full TTL (see Grant.claim). It goes out
 * after the new holder's code has started (in the next tick, after the
 * acquire's continuation), not before: sending it cost the waiter ~0.3-0.5 ms
 * of a cross-process handoff's ~2 ms on a busy machine, and the reservation
 * already makes the lock valid.
 */
export interface Claim {
  /** The grant the claim won, or undefined if it won none. Never rejects. */
  readonly result: Promise<Grant | undefined>;
  /**
   * Sends the claim now if it has not gone yet (idempotent): whatever the
   * lock sends next (an extend, its release) must follow it on every
   * connection, so that the claim never takes back keys already released.
   */
  send(): void;
}

/** The claim `start` makes, sent in the next tick or at the first send(), whichever comes first. */
export function deferClaim(start: () => Promise<Grant>): Claim {
  let settle: (grant: Grant | undefined) => void = () => undefined;
  const result = new Promise<Grant | undefined>((resolve) => {
    settle = resolve;
  });
  let sent = false;
  const send = (): void => {
    if (sent) return;
    sent = true;
    start().then(settle, () => settle(undefined));
  };
  process.nextTick(send);
  return { result, send };
}
