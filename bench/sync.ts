/**
 * `npm run bench:sync`: what `syncReplicas` costs, in one run, on a local
 * master with one replica: the uncontended acquire + release cycle (p50) and
 * 64 concurrent workers' cycles per second, without and with
 * `syncReplicas: { replicas: 1 }`, taking turns round by round so both meet
 * the same moments of a noisy machine; reported as medians over the rounds
 * and as ratios (with / without).
 *
 *   npm run bench:sync                 # 12 rounds
 *   npm run bench:sync -- --rounds 30
 */
import { setMaxListeners } from 'node:events';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { RedisServer } from '../test/support/RedisServer.js';
import { buildLibrary, removeBuilds, type Library } from './library.js';
import { now } from './scenarios/clock.js';
import { WORKERS } from './scenarios/parallel.js';
import { median, quantile } from './stats.js';

const TTL_MS = 10_000;
const UNCONTENDED_CYCLES = 300;
const PARALLEL_MS = 1_000;

type Variant = 'without sync' | 'with sync';
const VARIANTS: readonly Variant[] = ['without sync', 'with sync'];

interface Round {
  readonly p50Us: number;
  readonly cyclesPerSec: number;
  readonly errors: number;
}

type Locker = InstanceType<Library['RedisLock']>;

async function uncontendedP50Us(locker: Locker, key: string): Promise<{ p50Us: number; errors: number }> {
  const cycles: number[] = [];
  let errors = 0;
  while (cycles.length < UNCONTENDED_CYCLES && errors < UNCONTENDED_CYCLES) {
    const started = now();
    try {
      await (await locker.acquire(key, TTL_MS)).release();
      cycles.push(now() - started);
    } catch {
      errors++;
    }
  }
  return { p50Us: quantile(cycles, 0.5) * 1000, errors };
}

async function parallelCyclesPerSec(locker: Locker, keyPrefix: string): Promise<{ cyclesPerSec: number; errors: number }> {
  let cycles = 0;
  let errors = 0;
  const started = now();
  const end = started + PARALLEL_MS;
  const worker = async (index: number): Promise<void> => {
    while (now() < end) {
      try {
        await (await locker.acquire(`${keyPrefix}:w${index}`, TTL_MS)).release();
        cycles++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
  return { cyclesPerSec: (cycles / (now() - started)) * 1000, errors };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '12' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  setMaxListeners(WORKERS * 4);
  const master = new RedisServer();
  let replica: RedisServer | undefined;
  const clients: Redis[] = [];
  try {
    await master.start();
    replica = new RedisServer({ replicaOf: { host: master.host, port: master.port } });
    await replica.start();
    const library = await buildLibrary();
    const client = (): Redis => {
      const made = new Redis({ host: master.host, port: master.port });
      clients.push(made);
      return made;
    };
    const admin = client();
    await admin.wait(1, 10_000);
    const lockers: Record<Variant, Locker> = {
      'without sync': new library.RedisLock(client()),
      'with sync': new library.RedisLock(client(), { syncReplicas: { replicas: 1 } }),
    };
    const results: Record<Variant, Round[]> = { 'without sync': [], 'with sync': [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        const locker = lockers[variant];
        const prefix = `qlbench-sync:${round}:${variant === 'with sync' ? 's' : 'n'}`;
        const single = await uncontendedP50Us(locker, `${prefix}:k`);
        const parallel = await parallelCyclesPerSec(locker, prefix);
        results[variant].push({ p50Us: single.p50Us, cyclesPerSec: parallel.cyclesPerSec, errors: single.errors + parallel.errors });
      }
      process.stderr.write(`[bench:sync] round ${round + 1}/${rounds}\n`);
    }
    const summary = VARIANTS.map((variant) => ({
      variant,
      p50Us: median(results[variant].map((r) => r.p50Us)),
      cyclesPerSec: median(results[variant].map((r) => r.cyclesPerSec)),
      errors: results[variant].reduce((n, r) => n + r.errors, 0),
    }));
    const [without, withSync] = summary as [(typeof summary)[0], (typeof summary)[0]];
    console.log(`master + 1 replica (local), ${rounds} rounds, medians:`);
    console.log('variant        | uncontended p50 | 64 workers     | errors');
    for (const row of summary) {
      console.log(`${row.variant.padEnd(14)} | ${row.p50Us.toFixed(0).padStart(11)} µs | ${row.cyclesPerSec.toFixed(0).padStart(8)} cyc/s | ${row.errors}`);
    }
    console.log(
      `with sync / without: uncontended p50 ${(withSync.p50Us / without.p50Us).toFixed(2)}×, ` +
        `64-worker throughput ${(withSync.cyclesPerSec / without.cyclesPerSec).toFixed(2)}×`,
    );
  } finally {
    for (const made of clients) made.disconnect();
    await Promise.allSettled([master.stop(), replica?.stop()]);
    await removeBuilds();
  }
}

await main();
