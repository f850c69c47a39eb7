/**
 * What every chaos worker process does with its parent, whatever it runs:
 * importing this module makes an orphaned worker (its test process died)
 * leave at once, and collects rejections nobody handled for its last report.
 */
import type { FromWorker } from './protocol.js';

export function send(message: FromWorker): void {
  process.send?.(message);
}

/** Rejections nobody handled, for the worker's last message. */
export const unhandled: string[] = [];

let finished = false;
process.on('disconnect', () => {
  if (!finished) process.exit(2);
});
process.on('unhandledRejection', (reason) => {
  unhandled.push(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
});

/**
 * Sends the last message and waits until it is written (a long run's history
 * is megabytes), then lets go of the parent. From here the process must exit
 * by itself: a timer or connection left behind would keep it alive.
 */
export async function finish(message: FromWorker): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    process.send?.(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
  finished = true;
  process.disconnect();
}
