import { setImmediate, setTimeout } from 'node:timers';
import { MessageChannel, type MessagePort } from 'node:worker_threads';

/**
 * Holds the process open while an in-memory node has work a real client's
 * socket would keep it open for: a request not yet answered, a subscriber
 * connected (a waiter listening for releases), the Lua VM loading. Without
 * it a script whose top-level await waits on a lock would end with nothing
 * left to run (quorumlock's own timers are unref'd). A message port rather
 * than a timer, and node:timers rather than the globals, so that fake timers
 * in users' tests neither see it nor stop it.
 */
let holders = 0;
let port: MessagePort | undefined;
let closing = false;
let heldUntil = 0;

/** One more holder; the returned function lets go of it (once). */
export function holdProcessOpen(): () => void {
  if (holders++ === 0 && port === undefined) {
    const channel = new MessageChannel();
    port = channel.port1;
    port.on('message', () => undefined);
    channel.port2.unref();
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders === 0) closeSoon();
  };
}

/**
 * Holds the process open for `ms` (a reply that will never come, which a
 * real connection would still be waiting for while the caller's timeout runs).
 */
export function holdProcessOpenFor(ms: number): void {
  const until = performance.now() + ms;
  if (until <= heldUntil) return;
  heldUntil = until;
  const letGo = holdProcessOpen();
  setTimeout(letGo, ms);
}

/** Closed once a turn of the loop has passed with no holder: back-to-back requests share one port. */
function closeSoon(): void {
  if (closing) return;
  closing = true;
  setImmediate(() => {
    closing = false;
    if (holders > 0 || port === undefined) return;
    port.close();
    port = undefined;
  });
}
