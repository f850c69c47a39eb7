/**
 * A locker's deadlines of one length share one timer (DeadlineQueue). It
 * fires in the event loop's timers phase and judges the deadlines due once
 * the loop has read the replies that came in (afterArrivedReplies: the
 * check phase, after the poll phase). A deadline queued in between, by a
 * callback of that poll phase, has requests sent after the loop last looked
 * for replies: if that callback then runs long (a batch's results, a GC
 * pause), their replies come in during it and are read only by the next
 * poll phase. Judged in the check phase right after the turn, they timed
 * out (the renewals test's long-turn flake: nodes that ran the batch 220-240
 * ms before the turn ended still timed out). Built here on a real server's
 * PING.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monotonicClock } from '../../src/clock/Clock.js';
import { DeadlineQueue } from '../../src/node/DeadlineQueue.js';
import { RequestDeadline } from '../../src/node/RequestDeadline.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const TIMEOUT_MS = 20;

let nodes: LocalNodeSet;
let socket: Socket;

beforeAll(async () => {
  nodes = await startNodes(1);
  const url = new URL(nodes.urls[0] ?? '');
  socket = connect(Number(url.port), url.hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
});
afterAll(async () => {
  socket?.destroy();
  await nodes?.stopAll();
});

/** Keeps this thread busy for `ms`: a long synchronous turn. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // a long turn
  }
}

describe('DeadlineQueue', () => {
  it('does not time out a request sent after its timer fired whose reply came in during a long turn of the same poll phase', async () => {
    const queue = new DeadlineQueue(monotonicClock, TIMEOUT_MS);
    // An older deadline arms the queue's timer; its request has long answered.
    new RequestDeadline(monotonicClock, TIMEOUT_MS, queue).track(() => undefined)();
    const events: string[] = [];
    let replies = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    socket.on('data', (chunk: Buffer) => {
      replies += chunk.toString().split('+PONG').length - 1;
      if (replies === 1) {
        // The poll phase after the queue's timer fired: a request goes out under a
        // deadline queued now, and this callback runs past that deadline while the
        // reply comes in.
        const deadline = new RequestDeadline(monotonicClock, TIMEOUT_MS, queue);
        const answered = deadline.track(() => {
          events.push('timed out');
          finish();
        });
        socket.once('data', () => {
          events.push('answered');
          answered();
          finish();
        });
        socket.write('PING\r\n');
        busyFor(TIMEOUT_MS + 30);
      }
    });
    // Fires right after the queue's timer (same length, armed after it): the first
    // PING's reply is in by the end of this turn, so the poll phase after it reads it.
    setTimeout(() => {
      socket.write('PING\r\n');
      busyFor(10);
    }, TIMEOUT_MS);
    await finished;
    expect(events).toEqual(['answered']);
  });
});
