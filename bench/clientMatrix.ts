/**
 * quorumlock on each client, side by side in one run: ioredis and node-redis,
 * each beside a raw SET NX PX + compare-and-delete on the same client, and
 * redlock-universal on node-redis. Uncontended p50 of an acquire+release
 * cycle (one caller) and cycles/s with 64 concurrent callers on distinct
 * keys, on 1 and 5 local nodes, in interleaved rounds; quote the ratios.
 * quorumlock is the package as users get it (bench/library.ts): run from
 * src/ through tsx, every closure it makes per request would also pay tsx's
 * name-keeping helper, several µs a cycle that the raw cycles do not pay.
 *
 *   npx tsx --import ./scripts/register-lua.mjs bench/clientMatrix.ts [--rounds 3] [--cycles 2000] [--seconds 2]
 */
import { createHash, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createLock, createRedlock, NodeRedisAdapter } from 'redlock-universal';
import { buildLibrary, type Library, removeBuilds } from './library.js';
import { openNodes } from './nodes.js';
import { quantile } from './stats.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, cycles: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '2' } },
});
const ROUNDS = Number(values.rounds);
const CYCLES = Number(values.cycles);
const WINDOW_MS = Number(values.seconds) * 1000;
const TTL_MS = 10_000;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const RELEASE_SHA = createHash('sha1').update(RELEASE).digest('hex');

/** One acquire+release cycle on a fresh key; resolves once released. */
type Cycle = (key: string) => Promise<void>;
type NodeRedis = ReturnType<typeof createClient>;

interface Contender {
  readonly name: string;
  readonly cycle: Cycle;
}

function rawIoredis(clients: readonly Redis[]): Cycle {
  const quorum = Math.floor(clients.length / 2) + 1;
  return async (key) => {
    const value = randomUUID();
    const replies = await Promise.all(clients.map((c) => c.set(key, value, 'PX', TTL_MS, 'NX')));
    if (replies.filter((r) => r === 'OK').length < quorum) throw new Error('raw: not granted');
    await Promise.all(clients.map((c) => c.evalsha(RELEASE_SHA, 1, key, value)));
  };
}

function rawNodeRedis(clients: readonly NodeRedis[]): Cycle {
  const quorum = Math.floor(clients.length / 2) + 1;
  return async (key) => {
    const value = randomUUID();
    const replies: unknown[] = await Promise.all(clients.map((c) => c.sendCommand(['SET', key, value, 'PX', String(TTL_MS), 'NX'])));
    if (replies.filter((r) => r === 'OK').length < quorum) throw new Error('raw: not granted');
    await Promise.all(clients.map((c) => c.sendCommand(['EVALSHA', RELEASE_SHA, '1', key, value])));
  };
}

function quorumlock(lib: Library, clients: readonly (Redis | NodeRedis)[]): Cycle {
  const [only] = clients;
  const locker = clients.length === 1 && only ? new lib.RedisLock(only) : new lib.Redlock(clients as readonly Redis[]);
  return async (key) => {
    const lock = await locker.acquire(key, TTL_MS);
    await lock.release();
  };
}

function redlockUniversal(clients: readonly NodeRedis[]): Cycle {
  const adapters = clients.map((client) => new NodeRedisAdapter(client as never));
  return async (key) => {
    const lock =
      adapters.length === 1
        ? createLock({ adapter: adapters[0]!, key, ttl: TTL_MS })
        : createRedlock({ adapters, key, ttl: TTL_MS, quorum: Math.floor(adapters.length / 2) + 1 });
    const handle = await lock.acquire();
    await lock.release(handle);
  };
}

async function uncontendedP50(cycle: Cycle, tag: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CYCLES; i++) {
    const start = performance.now();
    await cycle(`${tag}:u:${i}`);
    times.push(performance.now() - start);
  }
  return quantile(times, 0.5) * 1000;
}

async function parallel64(cycle: Cycle, tag: string): Promise<number> {
  let done = 0;
  const until = performance.now() + WINDOW_MS;
  await Promise.all(
    Array.from({ length: 64 }, async (_, worker) => {
      for (let i = 0; performance.now() < until; i++) {
        await cycle(`${tag}:p:${worker}:${i}`);
        done++;
      }
    }),
  );
  return done / (WINDOW_MS / 1000);
}

async function main(): Promise<void> {
  const lib = await buildLibrary();
  const pool = await openNodes([], 5);
  const ioredis = pool.urls.map((url) => new Redis(url));
  const nodeRedis = (await Promise.all(pool.urls.map((url) => createClient({ url }).connect()))) as unknown as NodeRedis[];
  await Promise.all(ioredis.map((c) => c.script('LOAD', RELEASE)));
  const results = new Map<string, { p50: number[]; rate: number[] }>();
  try {
    for (const nodes of [1, 5]) {
      const io = ioredis.slice(0, nodes);
      const nr = nodeRedis.slice(0, nodes);
      const contenders: Contender[] = [
        { name: 'raw ioredis', cycle: rawIoredis(io) },
        { name: 'quorumlock ioredis', cycle: quorumlock(lib, io) },
        { name: 'raw node-redis', cycle: rawNodeRedis(nr) },
        { name: 'quorumlock node-redis', cycle: quorumlock(lib, nr) },
        { name: 'redlock-universal node-redis', cycle: redlockUniversal(nr) },
      ];
      for (let round = 0; round < ROUNDS; round++) {
        // Interleaved: each round measures every contender once, in a rotated order.
        const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
        for (const contender of order) {
          const tag = `${contender.name.replace(/ /g, '-')}:${nodes}:${round}`;
          const p50 = await uncontendedP50(contender.cycle, tag);
          const rate = await parallel64(contender.cycle, tag);
          const key = `${nodes} node(s) · ${contender.name}`;
          const entry = results.get(key) ?? { p50: [], rate: [] };
          entry.p50.push(p50);
          entry.rate.push(rate);
          results.set(key, entry);
          console.error(`${key} · round ${round + 1}: p50 ${p50.toFixed(0)} µs, 64 workers ${rate.toFixed(0)} cycles/s`);
        }
      }
    }
  } finally {
    for (const c of ioredis) c.disconnect();
    await Promise.all(nodeRedis.map((c) => c.close()));
    await pool.close();
    await removeBuilds();
  }
  const median = (xs: number[]) => quantile(xs, 0.5);
  // Ratios against the raw cycle on the same client and nodes, and the min-max of the rounds beside the median.
  const rawOf = (key: string) => results.get(key.replace(/(quorumlock|redlock-universal) /, 'raw '));
  const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;
  console.log('| nodes · contender | uncontended p50 µs (median of rounds; min-max) | ÷ raw | 64 workers cycles/s (median; min-max) | ÷ raw |');
  console.log('|---|---|---|---|---|');
  for (const [key, { p50, rate }] of results) {
    const raw = rawOf(key);
    const p50Ratio = raw && raw !== results.get(key) ? `${(median(p50) / median(raw.p50)).toFixed(2)}×` : '';
    const rateRatio = raw && raw !== results.get(key) ? `${(median(rate) / median(raw.rate)).toFixed(2)}×` : '';
    console.log(`| ${key} | ${median(p50).toFixed(0)} (${spread(p50)}) | ${p50Ratio} | ${median(rate).toFixed(0)} (${spread(rate)}) | ${rateRatio} |`);
  }
}

await main();
