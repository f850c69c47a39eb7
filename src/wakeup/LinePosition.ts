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

  /** An attempt from this place goes out at `sentAt`; returns its number, for heard(). */
  startAttempt(sentAt: number): number {
    this.attemptSentAt = sentAt;
    this.waitingSince.length = 0;
    return ++this.attempt;
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
    if (serverUs !== undefined) this.waitingSince[node] = serverUs;
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
