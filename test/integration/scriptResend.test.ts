/**
 * A node that has not cached a script answers NOSCRIPT (its first use after
 * a start, a restart or SCRIPT FLUSH), and the script is sent again in full.
 * Whatever was queued behind the first EVALSHA on that connection runs
 * before the resent script. A failed attempt's undo goes out at once, behind
 * the writes of slower nodes that had not answered yet: on such a node the
 * undo ran first, found nothing, and the resent acquire then took the keys
 * for their whole TTL (seen in the model check, redisModel.test.ts, under
 * load). Here the race is built on purpose: two nodes refuse at once, and
 * the third, 40 ms away each way and without the script, answers NOSCRIPT
 * after the undo is already queued behind it.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock, RedlockSemaphore, RedisSemaphore, type ReleaseResult } from '../../src/index.js';
import { slotKey } from '../../src/semaphore/permitKeys.js';
import { releasePlainScript, releaseScript } from '../../src/scripts/release.js';
import { semaphoreReleaseScript } from '../../src/scripts/semaphore.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';

let nodes: LocalNodeSet;

beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  await nodes?.stopAll();
});

const LATENCY_MS = 40;
const TTL_MS = 30_000;
/**
 * n2's latency each way where the race is with a release: the grant, the
 * release (and a pass to a waiter) take a few turns of a loaded event loop,
 * and must go out before n2's NOSCRIPT comes back (85 ms went by under load).
 */
const RELEASE_RACE_LATENCY_MS = 250;
/**
 * How long after the refusal the third node may still hold the loser's keys:
 * its two round trips (EVALSHA, then EVAL) of 2 × 40 ms each and the undo's
 * one more, 240 ms, with a busy 2-core machine's stalls on top. Far below
 * the 30 s TTL that a leftover key would live.
 */
const UNDONE_WITHIN_MS = 3_000;

interface Case {
  readonly name: string;
  /** The keys the loser's attempt writes on a node, and a holder of them on one node. */
  keys(resource: string): string[];
  holdOn(client: Redis, resource: string): Promise<unknown>;
  /** One attempt over the three nodes: null when refused. */
  tryAcquire(clients: Redis[], resource: string): Promise<unknown>;
}

const cases: Case[] = [
  {
    name: 'a lock on two resources',
    keys: (resource) => [`${resource}:a`, `${resource}:b`],
    holdOn: (client, resource) => client.set(`${resource}:a`, 'someone else', 'PX', TTL_MS),
    tryAcquire: (clients, resource) => new Redlock(clients, patient).tryAcquire([`${resource}:a`, `${resource}:b`], TTL_MS),
  },
  {
    name: 'a semaphore permit',
    keys: (resource) => [slotKey(resource, 0)],
    holdOn: (client, resource) => new RedisSemaphore(client, { ...patient, limit: 1 }).acquire(resource, TTL_MS),
    tryAcquire: (clients, resource) => new RedlockSemaphore(clients, { ...patient, limit: 1 }).tryAcquire(resource, TTL_MS),
  },
];

/**
 * Builds the race on n2 (the third node): only the acquire scripts are new to
 * it (a node long in use has the releases cached: a delete that met NOSCRIPT
 * too would be resent after the acquire, and run after it), and it answers
 * 40 ms away each way. `run` makes the attempt over [n0, n1, proxied n2];
 * afterwards, the attempt's keys must have been taken on n2 (the race built as
 * meant: the acquire, resent in full after NOSCRIPT, ran after the delete that
 * followed it) and be gone again well before their TTL.
 */
async function raceOnSlowNode(keys: readonly string[], run: (clients: Redis[]) => Promise<void>, latencyMs = LATENCY_MS): Promise<void> {
  const [n0, n1, n2] = nodes.clients() as [Redis, Redis, Redis];
  const proxies = await nodes.proxies();
  const proxied = await nodes.proxiedClients();
  await n2.script('FLUSH');
  for (const script of [releaseScript, releasePlainScript, semaphoreReleaseScript]) await n2.script('LOAD', script.source);
  const events = n2.duplicate();
  await events.config('SET', 'notify-keyspace-events', 'K$');
  let taken = false;
  events.on('message', () => (taken = true));
  await events.subscribe(`__keyspace@0__:${keys[0]}`);
  proxies[2]!.latencyMs = latencyMs;
  try {
    await run([n0, n1, proxied[2]!]);
    await expect.poll(() => taken, { timeout: 5_000, interval: 10 }).toBe(true);
    await expect.poll(async () => (await n2.exists(...keys)) === 0, { timeout: UNDONE_WITHIN_MS, interval: 10 }).toBe(true);
  } finally {
    proxies[2]!.latencyMs = 0;
    proxied.forEach((client) => client.disconnect());
    events.disconnect();
  }
}

describe('an attempt resent after NOSCRIPT behind its own undo', () => {
  it.for(cases)('$name: the keys it took there are undone after it', { timeout: 30_000 }, async ({ keys, holdOn, tryAcquire }, { task }) => {
    const [n0, n1] = nodes.clients() as [Redis, Redis];
    const resource = `resend-${task.id}`;
    await Promise.all([holdOn(n0, resource), holdOn(n1, resource)]);
    await raceOnSlowNode(keys(resource), async (clients) => {
      expect(await tryAcquire(clients, resource), 'refused by the two nodes held').toBeNull();
    });
  });
});

interface GrantedCase {
  readonly name: string;
  keys(resource: string): string[];
  /** An acquire over the three nodes, granted by the first two. */
  acquire(clients: Redis[], resource: string): Promise<{ release(): Promise<ReleaseResult> }>;
}

const granted: GrantedCase[] = [
  {
    name: 'a lock on two resources',
    keys: (resource) => [`${resource}:a`, `${resource}:b`],
    acquire: (clients, resource) => new Redlock(clients, patient).acquire([`${resource}:a`, `${resource}:b`], TTL_MS),
  },
  {
    name: 'a semaphore permit',
    keys: (resource) => [slotKey(resource, 0)],
    acquire: (clients, resource) => new RedlockSemaphore(clients, { ...patient, limit: 1 }).acquire(resource, TTL_MS),
  },
];

/**
 * The same race after a grant: two nodes grant at once, and the lock is
 * released before the third has answered. Its release runs there before the
 * acquire resent after NOSCRIPT, finds nothing, and the acquire then takes
 * the keys for their whole TTL unless the release goes again after it.
 */
describe('a granted acquire resent after NOSCRIPT behind its release', () => {
  it.for(granted)('$name: the keys it took there are released after it', { timeout: 30_000 }, async ({ keys, acquire }, { task }) => {
    const resource = `resend-granted-${task.id}`;
    await raceOnSlowNode(
      keys(resource),
      async (clients) => {
        const released = await (await acquire(clients, resource)).release();
        // Built as meant: the release ran on n2 before the resent acquire, and found nothing.
        expect((await released.settled).outcomes[2]?.status).toBe('held');
      },
      RELEASE_RACE_LATENCY_MS,
    );
  });
});

describe('a lock passed to a waiter of the same process before its acquire answered everywhere', () => {
  it('is released after the acquire resent after NOSCRIPT, by the waiter it was passed to', { timeout: 30_000 }, async ({ task }) => {
    const resource = `resend-passed-${task.id}`;
    // Two resources: the acquire of one is a plain SET NX, which never meets NOSCRIPT.
    const resources = [`${resource}:a`, `${resource}:b`];
    await raceOnSlowNode(
      resources,
      async (clients) => {
        const locker = new Redlock(clients, patient);
        // Queued in this process behind the first, the second asks no node: the first's release passes it the lock.
        const acquiring = locker.acquire(resources, TTL_MS);
        const waiting = locker.acquire(resources, TTL_MS);
        const first = await acquiring;
        expect((await first.release()).passedOn, 'passed on, not released').toBe(true);
        const released = await (await waiting).release();
        // Built as meant: the release ran on n2 before the resent acquire, and found nothing.
        expect((await released.settled).outcomes[2]?.status).toBe('held');
      },
      RELEASE_RACE_LATENCY_MS,
    );
  });
});
