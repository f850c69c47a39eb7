/**
 * A process's first contention opens its subscriber connections, one per
 * node, while its waiters are busiest: they must cost little, and on a busy
 * machine or a slow link their subscriptions take a while to confirm. A lock
 * passed from a holder of the same process needs none of them, so the waiter
 * behind it must not wait for them.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AcquireEvent, RedisLock, Redlock } from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { commandCalls } from '../support/lockRequests.js';
import { patient } from '../support/patient.js';
import { TcpProxy } from '../support/TcpProxy.js';

/** One way, on the subscriber connections only: a confirmation takes twice that. */
const SUBSCRIBER_LATENCY_MS = 400;

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  await nodes.stopAll();
});

/** Clients whose duplicates (the subscriber connections) go through a slow proxy; their own commands do not. */
async function clientsWithSlowSubscribers(count: number): Promise<{ clients: Redis[]; proxies: TcpProxy[] }> {
  const clients = nodes.clients().slice(0, count);
  const proxies: TcpProxy[] = [];
  for (const [index, client] of clients.entries()) {
    const endpoint = nodes.endpoints[index]!;
    const proxy = await TcpProxy.start(endpoint, { latencyMs: SUBSCRIBER_LATENCY_MS });
    proxies.push(proxy);
    client.duplicate = (override?: Partial<RedisOptions>) => new Redis({ ...client.options, ...override, port: proxy.port });
  }
  return { clients, proxies };
}

it('opens a subscriber connection without the ready check, whose INFO was 40% of its cost', async () => {
  const [client, admin] = [nodes.clients()[0]!, nodes.clients()[0]!];
  await Promise.all([client.ping(), admin.ping()]);
  await admin.config('RESETSTAT');
  const locker = new RedisLock(client, patient);
  const holder = await locker.acquire('ticket:4', 10_000);
  const waiting = locker.acquire('ticket:4', 10_000);
  await expect.poll(async () => (await admin.pubsub('NUMSUB', 'quorumlock:released:ticket:4'))[1], { timeout: 5_000, interval: 10 }).toBe(1);
  await holder.release();
  await (await waiting).release();
  const counted = await commandCalls(admin);
  expect(counted.subscribe).toBeGreaterThan(0);
  expect(counted.info).toBeUndefined();
});

describe.each([
  { name: 'RedisLock', count: 1, make: (clients: Redis[]) => new RedisLock(clients[0]!, patient) },
  { name: 'Redlock on 3 nodes', count: 3, make: (clients: Redis[]) => new Redlock(clients, patient) },
])('$name', ({ count, make }) => {
  it('passes a lock to the waiter behind its holder without waiting for the subscriptions to confirm', async () => {
    const { clients, proxies } = await clientsWithSlowSubscribers(count);
    const events: AcquireEvent[] = [];
    const listener = (event: unknown) => events.push(event as AcquireEvent);
    subscribe('quorumlock:acquire', listener);
    try {
      const locker = make(clients);
      // Together: the second queues behind the first while the first asks the nodes, and opens the watch.
      const first = locker.acquire('cart:9', 10_000);
      const second = locker.acquire('cart:9', 10_000);
      const held = await first;
      const releasedAt = performance.now();
      await held.release();
      const passed = await second;
      const waitedMs = performance.now() - releasedAt;
      await passed.release();
      expect(events.filter((e) => e.granted).map((e) => e.passed === true)).toEqual([false, true]);
      // Waiting for the subscriptions would take at least their round trip through the proxy.
      expect(waitedMs).toBeLessThan(SUBSCRIBER_LATENCY_MS);
    } finally {
      unsubscribe('quorumlock:acquire', listener);
      await Promise.all(proxies.map((proxy) => proxy.close()));
    }
  });
});
