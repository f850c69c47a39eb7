import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConnectionError, QuorumUnreachableError, RedisLock, Redlock } from '../../src/index.js';
import { freePort } from '../support/freePort.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { TcpProxy } from '../support/TcpProxy.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/firstCall.ts', import.meta.url));
const ONE_WAY_DELAYS_MS = [0, 10];
const TRIALS = 1;
/**
 * Each connection through the proxies is set up slowly (nothing passes for
 * CONNECT_MS), longer than the node timeout, while a reply takes a few ms: a
 * node timeout counted from the call instead of from the request fails every
 * configuration. The reply gets a second, not the 50 ms default: on a
 * loaded 2-core machine a fresh process's first reply once took longer than
 * 50 ms, which said nothing about connection time.
 */
const NODE_TIMEOUT_MS = 1_000;
const CONNECT_MS = 1_500;

interface FirstCallReport {
  readonly outcome: 'acquired' | 'null' | 'error';
  readonly code?: string;
  readonly message?: string;
}

/** Runs the first-call fixture in a new Node process: new clients, tryAcquire at once. */
function firstCallInFreshProcess(key: string, urls: readonly string[]): Promise<FirstCallReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', FIXTURE, key, String(NODE_TIMEOUT_MS), ...urls], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || line === '') reject(new Error(`fixture exited ${code}: ${stderr}`));
      else resolve(JSON.parse(line) as FirstCallReport);
    });
  });
}

// The cases run at once, each through proxies of its own (its own one-way delay) and on keys
// of its own. What each needs is the reply within the node timeout of a second once the slow
// connection opens, and four fresh processes starting at once on two cores left plenty of it:
// 49 ms at most from a fixture's clients turning ready to its answer, in 40 processes (five
// runs of the file beside five of syncDefaults, load 4-5).
describe.concurrent('a fresh process’s first call', () => {
  let nodes: LocalNodeSet;
  const holders: Redis[] = [];

  beforeAll(async () => {
    nodes = await startNodes(5);
  });
  afterAll(async () => {
    for (const client of holders) client.disconnect();
    await nodes.stopAll();
  });

  for (const nodeCount of [1, 5]) {
    for (const delayMs of ONE_WAY_DELAYS_MS) {
      it(`gets a free key, and null for a held one, never an outage (${nodeCount} node(s), ${delayMs} ms one way)`, async ({ expect, onTestFinished }) => {
        const proxies = await Promise.all(nodes.endpoints.slice(0, nodeCount).map((endpoint) => TcpProxy.start(endpoint, { latencyMs: delayMs })));
        onTestFinished(() => Promise.all(proxies.map((proxy) => proxy.close())).then(() => undefined));
        for (const proxy of proxies) proxy.connectDelayMs = CONNECT_MS;
        const urls = proxies.map((proxy) => `redis://${proxy.host}:${proxy.port}`);
        const prefix = `first-call:${nodeCount}:${delayMs}`;
        const heldKey = `${prefix}:held`;
        const clients = nodes.clients().slice(0, nodeCount);
        holders.push(...clients);
        const holder = nodeCount === 1 ? new RedisLock(clients[0] as Redis) : new Redlock(clients);
        const held = await holder.acquire(heldKey, 60_000);

        // One process at a time within a case: four at once across the cases is load enough.
        const reports: FirstCallReport[] = [];
        for (let trial = 0; trial < TRIALS; trial++) {
          reports.push(await firstCallInFreshProcess(`${prefix}:free:${trial}`, urls));
          reports.push(await firstCallInFreshProcess(heldKey, urls));
        }
        await held.release();

        expect(reports).toEqual(
          Array.from({ length: TRIALS }, () => [{ outcome: 'acquired' }, { outcome: 'null' }]).flat(),
        );
      });
    }
  }
});

describe('a node that refuses connections', () => {
  let nodes: LocalNodeSet;
  const clients: Redis[] = [];

  beforeAll(async () => {
    nodes = await startNodes(2);
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await nodes.stopAll();
  });

  async function refusingClient(): Promise<{ client: Redis; label: string }> {
    const port = await freePort();
    const client = new Redis(port, '127.0.0.1', { retryStrategy: () => 200 });
    client.on('error', () => {});
    clients.push(client);
    return { client, label: `127.0.0.1:${port}` };
  }

  it('is reported as refused, naming the node once, not as a timeout', async () => {
    const { client, label } = await refusingClient();
    const error = await new RedisLock(client).tryAcquire('refused', 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumUnreachableError);
    const unreachable = error as QuorumUnreachableError;
    expect(unreachable.outcomes).toHaveLength(1);
    expect(unreachable.outcomes[0]?.status).toBe('error');
    expect(unreachable.outcomes[0]?.error).toBeInstanceOf(NodeConnectionError);
    expect(unreachable.message).toContain('connection refused');
    expect(unreachable.message.split(label)).toHaveLength(2);
  });

  it('fails at once on later calls while the node still refuses', async () => {
    const { client } = await refusingClient();
    const locker = new RedisLock(client);
    await expect(locker.tryAcquire('refused', 10_000)).rejects.toBeInstanceOf(QuorumUnreachableError);
    const startedAt = performance.now();
    await expect(locker.tryAcquire('refused', 10_000)).rejects.toBeInstanceOf(QuorumUnreachableError);
    // A generous bound for a busy machine: the point is that it does not wait for the 200 ms reconnect.
    expect(performance.now() - startedAt).toBeLessThan(150);
  });

  it('is outvoted by a quorum that connected: the lock is granted without it', async () => {
    const { client } = await refusingClient();
    const reachable = nodes.clients();
    clients.push(...reachable);
    const redlock = new Redlock([client, ...reachable]);
    const lock = await redlock.tryAcquire('minority-refused', 10_000);
    expect(lock).not.toBeNull();
    await lock?.release();
  });
});

describe('clients that connect lazily', () => {
  let nodes: LocalNodeSet;

  beforeAll(async () => {
    nodes = await startNodes(1);
  });
  afterAll(async () => {
    await nodes.stopAll();
  });

  it('with lazyConnect and enableOfflineQueue: false, the first call connects and gets the lock', async () => {
    const client = nodes.clients({ lazyConnect: true, enableOfflineQueue: false })[0] as Redis;
    expect(client.status).toBe('wait');
    const lock = await new RedisLock(client).tryAcquire('lazy', 10_000);
    expect(lock).not.toBeNull();
    await lock?.release();
  });

  it('waits for a connection past the node timeout, until the signal aborts', async () => {
    const blackhole = await TcpProxy.start(nodes.endpoints[0] as { host: string; port: number });
    blackhole.blackhole();
    const client = nodes.clientTo(blackhole, { connectTimeout: 60_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('enough')), 300);
    const startedAt = performance.now();
    const attempt = new RedisLock(client).tryAcquire('never-connects', 10_000, { signal: controller.signal });
    await expect(attempt).rejects.toMatchObject({ code: 'QUORUMLOCK_ABORTED' });
    const elapsedMs = performance.now() - startedAt;
    // The node timeout (50 ms) did not end the wait; the signal did, not ioredis's 60 s.
    expect(elapsedMs).toBeGreaterThanOrEqual(250);
    expect(elapsedMs).toBeLessThan(5_000);
    client.disconnect();
    await blackhole.close();
  });
});
