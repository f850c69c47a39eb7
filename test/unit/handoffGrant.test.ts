import { describe, expect, it } from 'vitest';
import { handedReservation, parseHandoff } from '../../src/wakeup/handoffGrant.js';

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
