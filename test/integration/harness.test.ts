import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../support/FakeClock.js';
import { isLocal, livePids, localProvider, pickProvider, startNodes, type LocalNodeSet } from '../support/harness.js';
import { pidExists } from '../support/processRegistry.js';
import { SkewNemesis } from '../support/skewNemesis.js';

const TIMEOUT = { timeout: 60_000 };

const sets: LocalNodeSet[] = [];
async function nodes(n: number, persistence: 'none' | 'appendfsync-always' = 'none'): Promise<LocalNodeSet> {
  const set = await startNodes(n, { persistence });
  sets.push(set);
  return set;
}
afterEach(async () => {
  await Promise.all(sets.splice(0).map((set) => set.stopAll()));
});

/** 'pending' if `promise` has not settled after `ms` (an outcome, not a duration). */
async function stillPendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return !settled;
}

/** Retry `check` until it returns true (bounded). */
async function eventually(check: () => Promise<boolean>, tries = 200, pauseMs = 25): Promise<void> {
  let lastError: unknown;
  for (let i = 0; i < tries; i++) {
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    await sleep(pauseMs);
  }
  throw new Error(`condition not met after ${tries} tries: ${String(lastError)}`);
}

function first<T>(items: readonly T[]): T {
  const item = items[0];
  if (item === undefined) throw new Error('empty');
  return item;
}

describe('RedisServer processes', TIMEOUT, () => {
  it('starts three nodes on distinct ports that each answer PING', async () => {
    const set = await nodes(3);
    expect(new Set(set.endpoints.map((e) => e.port)).size).toBe(3);
    const replies = await Promise.all(set.clients().map((c) => c.ping()));
    expect(replies).toEqual(['PONG', 'PONG', 'PONG']);
    expect(set.urls.every((url) => url.startsWith('redis://127.0.0.1:'))).toBe(true);
  });

  it('makes the client of a killed node fail its commands', async () => {
    const set = await nodes(2);
    const [a, b] = set.clients({ maxRetriesPerRequest: 0, commandTimeout: 2000 });
    await a?.ping();
    await set.node(0).kill();
    expect(set.node(0).isRunning).toBe(false);
    expect(set.node(0).pid).toBeUndefined();
    await expect(a?.set('k', 'v')).rejects.toThrow();
    expect(await b?.ping()).toBe('PONG');
  });

  it('answers nothing while paused, then answers once resumed', async () => {
    const set = await nodes(1);
    const client = first(set.clients());
    await client.set('k', 'v');
    await set.node(0).pause();
    expect(set.node(0).isPaused).toBe(true);
    const reply = client.get('k');
    expect(await stillPendingAfter(reply, 300)).toBe(true);
    await set.node(0).resume();
    expect(await reply).toBe('v');
  });

  it('loses every key when restarted empty, on the same port', async () => {
    const set = await nodes(1, 'appendfsync-always');
    const node = set.node(0);
    const port = node.port;
    await first(set.clients()).set('k', 'v');
    await node.restart({ empty: true });
    expect(node.port).toBe(port);
    expect(await first(set.clients()).get('k')).toBeNull();
  });

  it('keeps acknowledged writes across a crash restart with appendfsync always', async () => {
    const set = await nodes(1, 'appendfsync-always');
    const node = set.node(0);
    const oldPid = node.pid;
    await first(set.clients()).set('k', 'v', 'PX', 60_000);
    await node.restart(); // SIGKILL, then replay the AOF
    expect(node.pid).not.toBe(oldPid);
    const client = first(set.clients());
    expect(await client.get('k')).toBe('v');
    expect(await client.pttl('k')).toBeGreaterThan(0);
  });

  it('loses keys on a crash restart without persistence', async () => {
    const set = await nodes(1);
    await first(set.clients()).set('k', 'v');
    await set.node(0).restart();
    expect(await first(set.clients()).get('k')).toBeNull();
  });

  it('flushAll empties every running node', async () => {
    const set = await nodes(2);
    const clients = set.clients();
    await Promise.all(clients.map((c) => c.set('k', 'v')));
    await set.flushAll();
    expect(await Promise.all(clients.map((c) => c.dbsize()))).toEqual([0, 0]);
  });

  it('stopAll leaves no redis-server of ours behind, paused ones included, and is idempotent', async () => {
    const set = await nodes(3);
    const pids = set.nodes.map((n) => n.pid).filter((p): p is number => p !== undefined);
    const dirs = set.nodes.map((n) => n.dir).filter((d): d is string => d !== undefined);
    expect(pids).toHaveLength(3);
    expect(pids.every(pidExists)).toBe(true);
    set.clients();
    await set.node(1).pause();
    await set.stopAll();
    await set.stopAll();
    expect(pids.filter(pidExists)).toEqual([]);
    expect(livePids().filter((p) => pids.includes(p))).toEqual([]);
    expect(dirs.filter((d) => existsSync(d))).toEqual([]);
    expect(set.nodes.every((n) => !n.isRunning)).toBe(true);
  });
});

describe('providers', TIMEOUT, () => {
  it('picks local processes unless containers are asked for', async () => {
    expect(await pickProvider({})).toBe(localProvider);
  });

  it('falls back to local processes, saying why once, when containers are asked for but Docker is absent', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const provider = await pickProvider({ QUORUMLOCK_PROVIDER: 'containers' });
      if (provider === localProvider) {
        await pickProvider({ QUORUMLOCK_PROVIDER: 'containers' });
        expect(warn).toHaveBeenCalledTimes(1);
      } else {
        expect(provider.name).toBe('container'); // a Docker engine is reachable here
      }
    } finally {
      warn.mockRestore();
    }
  });

  it('offers fault injection only on local node sets', async () => {
    const set = await nodes(1);
    expect(isLocal(set)).toBe(true);
    expect(set.provider).toBe('local');
  });
});

describe('TcpProxy', TIMEOUT, () => {
  async function proxied(options: Parameters<LocalNodeSet['proxiedClients']>[0] = {}) {
    const set = await nodes(1);
    const proxy = first(await set.proxies());
    const client = first(await set.proxiedClients(options));
    const direct = first(set.clients());
    await client.ping();
    return { set, proxy, client, direct };
  }

  it('forwards commands and counts the traffic', async () => {
    const { proxy, client, direct } = await proxied();
    await client.set('k', 'v');
    expect(await direct.get('k')).toBe('v');
    const stats = proxy.stats;
    expect(stats.connections).toBeGreaterThanOrEqual(1);
    expect(stats.bytesToServer).toBeGreaterThan(0);
    expect(stats.bytesToClient).toBeGreaterThan(0);
  });

  it('delays but keeps replies in order under latency, even when it changes', async () => {
    const { proxy, client } = await proxied();
    proxy.latencyMs = 200;
    const before = proxy.stats.bytesFromClients;
    const slow = Array.from({ length: 10 }, () => client.incr('counter'));
    await eventually(async () => proxy.stats.bytesFromClients > before); // queued behind the latency
    expect(await stillPendingAfter(first(slow), 50)).toBe(true);
    proxy.latencyMs = 0; // later chunks must still wait for the earlier ones
    const fast = Array.from({ length: 10 }, () => client.incr('counter'));
    expect(await Promise.all([...slow, ...fast])).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('blackhole: no request reaches the node and no reply comes back, until heal', async () => {
    const { proxy, client, direct } = await proxied({ commandTimeout: 300 });
    proxy.blackhole();
    await expect(client.set('k', 'v')).rejects.toThrow(/timed out/i);
    expect(await direct.get('k')).toBeNull();
    proxy.heal();
    await eventually(async () => (await client.ping()) === 'PONG');
    expect(proxy.fault).toBe('none');
  });

  it('dropReplies: the write is applied on the node but its reply never comes', async () => {
    const { proxy, client, direct } = await proxied({ commandTimeout: 300 });
    proxy.dropReplies();
    await expect(client.set('k', 'v')).rejects.toThrow(/timed out/i);
    await eventually(async () => (await direct.get('k')) === 'v');
    expect(proxy.stats.bytesDropped).toBeGreaterThan(0);
    proxy.heal();
    await eventually(async () => (await client.get('k')) === 'v');
  });

  it('resetAfterRequest: the write is applied, then the connection is reset before the reply', async () => {
    const { proxy, client, direct } = await proxied({ autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
    proxy.resetAfterRequest();
    await expect(client.set('k', 'v')).rejects.toThrow();
    await eventually(async () => (await direct.get('k')) === 'v');
    expect(proxy.stats.resets).toBe(1);
    expect(proxy.fault).toBe('none'); // one shot
    await eventually(async () => (await client.ping()) === 'PONG'); // the client reconnects
  });

  it('cutOff: drops every connection and each new one, until heal', async () => {
    const { set, proxy, client } = await proxied({ maxRetriesPerRequest: 0, commandTimeout: 500 });
    proxy.cutOff();
    expect(proxy.connectionCount).toBe(0);
    await expect(client.ping()).rejects.toThrow();
    const fresh = first(await set.proxiedClients({ maxRetriesPerRequest: 0, commandTimeout: 500 }));
    await expect(fresh.ping()).rejects.toThrow();
    proxy.heal();
    await eventually(async () => (await fresh.ping()) === 'PONG');
  });

  it('keeps forwarding to a node restarted on the same port', async () => {
    const { set, client } = await proxied();
    await set.node(0).restart();
    await eventually(async () => (await client.ping()) === 'PONG');
  });
});

describe('SkewNemesis', TIMEOUT, () => {
  it('shortens the TTL of keys on the node as a fast clock would, leaving others alone', async () => {
    const set = await nodes(1);
    const [client, nemesisClient] = [first(set.clients()), first(set.clients())];
    await client.set('lock:a', '1', 'PX', 600_000);
    await client.set('other', '1', 'PX', 600_000);
    await client.set('forever', '1');
    const nemesis = new SkewNemesis(nemesisClient, { rate: 3, match: 'lock:*' });
    nemesis.start();
    await eventually(async () => nemesis.totalShiftedMs >= 200, 400);
    await nemesis.stop();
    expect(nemesis.running).toBe(false);
    const shifted = nemesis.totalShiftedMs;
    expect(await client.pttl('lock:a')).toBeLessThanOrEqual(600_000 - shifted);
    expect(await client.pttl('other')).toBeGreaterThan(600_000 - shifted);
    expect(await client.pttl('forever')).toBe(-1);
    expect(nemesis.errors).toBe(0);
  });

  it('jump shortens every TTL at once and deletes keys whose TTL runs out', async () => {
    const set = await nodes(1);
    const client: Redis = first(set.clients());
    await client.set('long', '1', 'PX', 600_000);
    await client.set('short', '1', 'PX', 5_000);
    await client.set('forever', '1');
    const nemesis = new SkewNemesis(client, { rate: 1 });
    expect(await nemesis.jump(10_000)).toEqual({ adjusted: 1, deleted: 1 });
    expect(await client.pttl('long')).toBeLessThanOrEqual(590_000);
    expect(await client.exists('short')).toBe(0);
    expect(await client.pttl('forever')).toBe(-1);
  });
});

describe('FakeClock', () => {
  it('moves only when told to, and never backwards', () => {
    const clock = new FakeClock(100);
    expect(clock.now()).toBe(100);
    clock.advance(50);
    expect(clock.now()).toBe(150);
    clock.set(1_000);
    expect(clock.now()).toBe(1_000);
    expect(() => clock.set(999)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
  });
});
