import { describe, expect, it } from 'vitest';
import { handedReservation, parseHandoff } from '../../src/wakeup/handoffGrant.js';
import { LinePosition } from '../../src/wakeup/LinePosition.js';

const stamp = (serverUs: number, reservationMs = 600) => ({ serverUs, reservationMs });

describe('handedReservation', () => {
  it('is the lock when a quorum handed the key over after the replies that kept us waiting', () => {
    expect(handedReservation([stamp(11), stamp(21, 500), undefined], [10, 20, 30], 2)).toEqual({ nodes: [0, 1], reservationMs: 500 });
  });

  it('does not count a handoff announced no later than the reply: it may have run out, or gone back to the line, since', () => {
    expect(handedReservation([stamp(10)], [10], 1)).toBeUndefined();
    expect(handedReservation([stamp(9)], [10], 1)).toBeUndefined();
    expect(handedReservation([stamp(11), stamp(20)], [10, 20], 2)).toBeUndefined();
  });

  it('does not count a node whose reply to the latest attempt did not keep us waiting (granted, failed, timed out)', () => {
    expect(handedReservation([stamp(11), stamp(11), stamp(11)], [10, undefined, undefined], 2)).toBeUndefined();
  });

  it('needs a quorum, not one node', () => {
    expect(handedReservation([stamp(11), undefined, undefined, undefined, undefined], [10, 10, 10, 10, 10], 3)).toBeUndefined();
    expect(handedReservation([stamp(11), stamp(11), stamp(11), undefined, undefined], [10, 10, 10, 10, 10], 3)?.nodes).toEqual([0, 1, 2]);
  });

  it('refuses a reservation of no length', () => {
    expect(handedReservation([stamp(11, 0)], [10], 1)).toBeUndefined();
  });
});

describe('LinePosition: when a reply dates our wait on a node', () => {
  it('a reply that kept us waiting does, until the next attempt', () => {
    const position = new LinePosition();
    position.startAttempt(0);
    position.heard(0, position.ticket, 10);
    expect(position.waitingSince[0]).toBe(10);
    position.startAttempt(1);
    expect(position.waitingSince[0]).toBeUndefined();
  });

  // Seen in chaos (wait-line-handoffs, 5 nodes): an attempt refused on n0-n2
  // was undone on n3 and n4, which had not answered yet. n3 had kept us in
  // line, then handed us the key at a release, then ran the undo, which took
  // the reservation back and handed it to the waiter ahead of us. Its late
  // reply dated our wait before that handoff, so the handoff counted, and
  // with real ones from n1 and n2 we held a lock another waiter held.
  it('not on a node where the undo took back a key handed to us since, whenever its reply comes', () => {
    const position = new LinePosition();
    position.startAttempt(0);
    for (const node of [0, 1, 2]) position.heard(node, position.ticket, 10);
    position.heard(3, position.ticket, 11);
    position.tookBack(3);
    expect(position.waitingSince[3]).toBeUndefined();
    position.tookBack(4);
    position.heard(4, position.ticket, 11);
    expect(position.waitingSince[4]).toBeUndefined();
    expect(position.nodes.has(4)).toBe(true);
    const handedAtRelease = [undefined, stamp(12), stamp(12), stamp(12), stamp(12)];
    expect(handedReservation(handedAtRelease, position.waitingSince, 3)).toBeUndefined();
  });

  it('such a late reply still raises the ticket, and the next attempt dates the wait there again', () => {
    const position = new LinePosition();
    position.startAttempt(0);
    position.tookBack(1);
    const larger = position.ticket + 5;
    position.heard(1, larger, 11);
    expect(position.ticket).toBe(larger);
    expect(position.waitingSince[1]).toBeUndefined();
    position.startAttempt(1);
    position.heard(1, position.ticket, 20);
    expect(position.waitingSince[1]).toBe(20);
  });

  it('where the undo put us back in line, a handoff at its time or later counts, and the one it took back does not', () => {
    const position = new LinePosition();
    position.startAttempt(0);
    for (const node of [0, 1, 2]) position.heard(node, position.ticket, 10);
    // On node 2 the release handed us the key at 12, and the undo took it back at 15, rejoined us and handed it straight back.
    position.tookBack(2, 15);
    position.heard(2, position.ticket, 10);
    expect(handedReservation([stamp(12), undefined, stamp(12)], position.waitingSince, 2)).toBeUndefined();
    expect(handedReservation([stamp(12), undefined, stamp(15)], position.waitingSince, 2)?.nodes).toEqual([0, 2]);
    expect(handedReservation([stamp(12), undefined, stamp(14)], position.waitingSince, 2)).toBeUndefined();
  });
});

describe('parseHandoff', () => {
  it("reads '<value> <server µs> <reservation ms> <key>', the key spaces and all", () => {
    expect(parseHandoff('ab12cd34.ff 1795492515554156 600 order 42')).toEqual({
      value: 'ab12cd34.ff',
      key: 'order 42',
      stamp: { serverUs: 1795492515554156, reservationMs: 600 },
    });
  });

  it('refuses anything else', () => {
    for (const message of ['', 'value', 'value key', 'value 1 key', 'value x 600 key', 'value 1 y key']) {
      expect(parseHandoff(message)).toBeUndefined();
    }
  });
});
