import { MessageChannel, type MessagePort } from 'node:worker_threads';

/**
 * Holds the process open while an in-memory node has a subscriber connected
 * (a waiter listening for releases), as a real client's socket does: a
 * script whose top-level await waits for a lock would otherwise end with
 * nothing left to run. A message port rather than a timer, so that fake
 * timers in users' tests neither see it nor stop it.
 */
let holders = 0;
let port: MessagePort | undefined;

/** One more holder; the returned function lets go of it (once). */
export function holdProcessOpen(): () => void {
  if (holders++ === 0) {
    const channel = new MessageChannel();
    port = channel.port1;
    port.on('message', () => undefined);
    channel.port2.unref();
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders === 0) {
      port?.close();
      port = undefined;
    }
  };
}
