/**
 * How long a place in a Redis wait line is held without news from its
 * waiter, and how often the waiters of a process send that news. A dead or
 * paused waiter costs the others at most the lease plus one backoff delay
 * (retry.maxDelayMs), however many died: their leases pass together and the
 * next attempt drops them all.
 */
export const LEASE_MS = 600;
export const KEEPALIVE_MS = 200;

/**
 * One acquire call's place in the wait lines its nodes keep: the ticket it
 * was given (the largest over the nodes, written back to all of them so they
 * order their waiters alike) and the nodes that may still have it in line.
 */
export class LinePosition {
  /**
   * Taken by the waiter itself and sent to every node, so that every node
   * orders the same waiters alike (by ticket, ties by value) and their
   * handoffs go to the same waiter: tickets the nodes handed out each on its
   * own split the votes whenever two waiters reached two nodes in different
   * orders. Waiters of different hosts are ordered as their clocks agree.
   */
  ticket = nextTicket();
  readonly leaseMs = LEASE_MS;
  /** Indexes of the nodes that may hold a place for us. */
  readonly nodes = new Set<number>();
  /** Counts the attempts made from this place: replies to an older one no longer say where we stand. */
  attempt = 0;
  /** When the latest attempt was sent, on the locker's clock. */
  attemptSentAt = 0;
  /**
   * Per node: its server time in µs in its reply to the latest attempt, when
   * that reply kept us waiting (see handoffGrant.ts).
   */
  readonly waitingSince: (number | undefined)[] = [];
  /** Nodes where the latest attempt's undo took back a key handed to us after that attempt (see tookBack). */
  readonly #takenBack = new Set<number>();

  /** An attempt from this place goes out at `sentAt`; returns its number, for heard(). */
  startAttempt(sentAt: number): number {
    this.attemptSentAt = sentAt;
    this.waitingSince.length = 0;
    this.#takenBack.clear();
    return ++this.attempt;
  }

  /**
   * The latest attempt's undo deleted our value on `node`, where that attempt
   * took nothing: a release had handed us the key there after the attempt
   * kept us waiting, and the undo, running after both, took that reservation
   * back and handed it on. The handoff's announcement must not count, so the
   * attempt's reply (still on its way, perhaps) no longer dates our wait
   * there (seen in chaos: with real handoffs from two other nodes, a waiter
   * held a lock the waiter ahead of it held). Where the undo put us back in
   * line first (`rejoinedAtUs`, its server time), our wait there dates from
   * then: the key it handed on may have come straight back to us, announced
   * with that same time, and that handoff counts (without it, a waiter whose
   * undo raced the release fell back to one more attempt).
   */
  tookBack(node: number, rejoinedAtUs?: number): void {
    this.#takenBack.add(node);
    this.waitingSince[node] = rejoinedAtUs === undefined ? undefined : rejoinedAtUs - 1;
  }

  /**
   * After an attempt: `ticket` when the node kept us in line (0: unknown),
   * null when it granted; `serverUs` with a ticket, when the node said it
   * and the reply is to the latest attempt.
   */
  heard(node: number, ticket: number | null, serverUs?: number): void {
    if (ticket === null) {
      this.nodes.delete(node);
      this.waitingSince[node] = undefined;
      return;
    }
    this.nodes.add(node);
    if (ticket > this.ticket) this.ticket = ticket;
    if (serverUs !== undefined && !this.#takenBack.has(node)) this.waitingSince[node] = serverUs;
  }

  get inLine(): boolean {
    return this.nodes.size > 0;
  }
}

let lastTicket = 0;

/** Microseconds on the wall clock as this process started it, strictly increasing here. */
function nextTicket(): number {
  const now = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  lastTicket = now > lastTicket ? now : lastTicket + 1;
  return lastTicket;
}
