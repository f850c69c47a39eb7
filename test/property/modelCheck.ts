/**
 * What the differential model checks share: one real redis-server for the
 * file, and how a key's TTL on it is compared with its model's.
 */
import { performance } from 'node:perf_hooks';
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

/**
 * Whether a run's readings still compare with its model. In the model a live
 * key lasts at least one time unit past its last write, and real time only
 * runs on Redis: so readings taken less than a unit after the run began show
 * the scripts, and later ones may show real time instead (a key expired on
 * Redis that the model, whose clock moves only by its steps, still holds).
 * A loaded machine can stall a run that long: vitest's workers share two
 * cores with busy processes in the loaded runs. Such a run stops comparing
 * there; its earlier steps were compared, and `expectFewCut` holds the count
 * of such runs to a tenth, so a stalled machine cannot pass the check empty.
 */
export class ModelTime {
  #cutShort = 0;
  readonly #unitMs: number;

  constructor(unitMs: number) {
    this.#unitMs = unitMs;
  }

  /** Call after a step's replies and readings came in, before comparing them. */
  holds(startedAt: number): boolean {
    if (performance.now() - startedAt < this.#unitMs) return true;
    this.#cutShort++;
    return false;
  }

  expectFewCut(runs: number): void {
    expect(this.#cutShort, `runs cut short by a stall of a time unit or more, of ${runs}`).toBeLessThanOrEqual(Math.floor(runs / 10));
  }
}
