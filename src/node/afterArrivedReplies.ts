import { realSetImmediate } from '../shared/realSetImmediate.js';

/**
 * Runs `expire` once the event loop has read the replies that already came
 * in. A deadline's timer fires in the loop's timers phase, before the poll
 * phase reads the sockets: after a turn longer than the node timeout (a GC
 * pause, ten thousand renewals' results, a loaded machine) every request
 * then in flight timed out, though its node had answered within a
 * millisecond. Each timeout became a retry, the retries made the turns
 * longer, and a soak holding 10,000 locks lost them all and stopped. The
 * check phase (setImmediate) runs right after poll, so a reply that arrived
 * before the deadline counts; one still on the wire does not. Safety does
 * not depend on it: validity is counted from before the request was sent,
 * whenever its reply is read.
 */
export function afterArrivedReplies(expire: () => void): void {
  // The real check phase even where a test fakes timers: fake time moves the
  // deadline's timer; what runs after it is the loop's business.
  realSetImmediate(expire);
}
