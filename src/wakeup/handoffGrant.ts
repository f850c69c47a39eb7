/**
 * When a handoff announced by the nodes is itself the lock: pure logic, no I/O.
 *
 * A release that finds a waiter at the head of the key's wait line sets the
 * key to that waiter's value for a reservation (line.lua's hand_off) and
 * tells it so, with the node's server time. The waiter holds the key from
 * that moment until the reservation runs out, and its own last attempt was
 * sent before it: that attempt's reply kept it waiting, so the node ran it
 * before the handoff. Validity is then counted from that attempt's start,
 * with the reservation as the TTL and the usual drift allowance, and only on
 * a quorum of such nodes: the Redlock rules for any grant. The waiter's claim
 * of its full TTL follows, off the critical path.
 *
 * The server time is what orders the two on one node: an announcement and a
 * reply travel on different connections, so one that arrives after the reply
 * may have been sent before it (its reservation then already ran out, or
 * went back to the line). A handoff counts only when its server time is past
 * the one the node gave with the reply. This assumes the node's clock does not
 * step back between the two, as Redis's own expiry does.
 */

/** What a handoff's announcement says besides the waiter: when, and for how long. */
export interface HandoffStamp {
  /** The node's server time (TIME) in µs when it handed the key over. */
  readonly serverUs: number;
  /** How long the key is reserved for the waiter. */
  readonly reservationMs: number;
}

/** A quorum of nodes handed us the key after our last attempt: which, and the shortest reservation among them. */
export interface HandedReservation {
  readonly nodes: readonly number[];
  readonly reservationMs: number;
}

/**
 * `stamps[i]`: the handoff to us node i announced since our last attempt;
 * `waitingSince[i]`: node i's server time in the reply of that attempt that
 * kept us waiting (absent: it granted, failed, timed out or did not say).
 */
export function handedReservation(
  stamps: readonly (HandoffStamp | undefined)[],
  waitingSince: readonly (number | undefined)[],
  quorum: number,
): HandedReservation | undefined {
  const nodes: number[] = [];
  let reservationMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < stamps.length; i++) {
    const stamp = stamps[i];
    const since = waitingSince[i];
    if (stamp === undefined || since === undefined || !(stamp.serverUs > since)) continue;
    nodes.push(i);
    if (stamp.reservationMs < reservationMs) reservationMs = stamp.reservationMs;
  }
  return nodes.length >= quorum && reservationMs > 0 ? { nodes, reservationMs } : undefined;
}

/**
 * A handoff message on a process's handoff channel, '<value> <server µs>
 * <reservation ms> <key>' (line.lua's announce_handoff; the key may hold
 * spaces); undefined for anything else.
 */
export function parseHandoff(message: string): { value: string; key: string; stamp: HandoffStamp } | undefined {
  const first = message.indexOf(' ');
  const second = first > 0 ? message.indexOf(' ', first + 1) : -1;
  const third = second > 0 ? message.indexOf(' ', second + 1) : -1;
  if (third < 0) return undefined;
  const serverUs = Number(message.slice(first + 1, second));
  const reservationMs = Number(message.slice(second + 1, third));
  if (!Number.isFinite(serverUs) || !Number.isFinite(reservationMs)) return undefined;
  return { value: message.slice(0, first), key: message.slice(third + 1), stamp: { serverUs, reservationMs } };
}
