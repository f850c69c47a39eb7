/**
 * What the differential model checks share: one real redis-server for the
 * file, and how a key's TTL on it is compared with its model's.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

/** Real time spent by a run's steps, beyond which a TTL differs for a reason of its own. */
const TTL_SLACK_MS = 50;

/** Starts one node before the file's tests and stops it after; the client, once started. */
export function oneRealNode(): () => Redis {
  let nodes: LocalNodeSet | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    nodes = await startNodes(1);
    [client] = nodes.clients() as [Redis];
  });
  afterAll(async () => {
    client?.disconnect();
    await nodes?.stopAll();
  });
  return () => {
    if (!client) throw new Error('oneRealNode: the node starts in beforeAll');
    return client;
  };
}

/**
 * A real PTTL against the model's: a negative one (-2 missing, -1 no TTL)
 * exactly; else real time may only have shortened the real one, by up to
 * `elapsedMs` since the run began (plus slack), and each of `jumps` clock
 * jumps may round it by a millisecond. A semantic difference is a whole
 * time unit or more.
 */
export function expectTtl(where: string, pttl: number, expectedTtl: number, elapsedMs: number, jumps: number): void {
  if (expectedTtl < 0) {
    expect(pttl, where).toBe(expectedTtl);
    return;
  }
  expect(expectedTtl - pttl, where).toBeGreaterThanOrEqual(-1 - jumps);
  expect(expectedTtl - pttl, where).toBeLessThanOrEqual(elapsedMs + TTL_SLACK_MS);
}
