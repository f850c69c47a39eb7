/**
 * `npm run bench:sync`: what `syncReplicas` costs, in one run, on a local
 * master with one replica (servers at Redis's default hz 10), taking turns
 * round by round so every variant meets the same moments of a noisy machine;
 * medians over the rounds, and ratios.
 *
 * - Replica up: the uncontended acquire + release cycle (p50) and 64
 *   concurrent workers' cycles per second, without and with
 *   `syncReplicas: { replicas: 1 }`.
 * - Replica down (SIGSTOP) against up: 64 workers on ONE client, 48 of them
 *   cycling unsynced locks and 16 synced ones (tryAcquire); the unsynced
 *   locks' throughput and p99 cycle, and the synced calls' outcomes by code.
 *
 * With `--candidate DIR`, quorumlock built from DIR/src (e.g. the tree
 * before a change) is measured beside this checkout's, in the same rounds.
 *
 *   npm run bench:sync                       # 6 rounds
 *   npm run bench:sync -- --rounds 12 --candidate /tmp/before
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
/** Of the 64 workers on one client with the replica down or up, how many take synced locks. */
const SYNCED_WORKERS = 16;

type Locker = InstanceType<Library['RedisLock']>;

interface Build {
  readonly label: string;
  readonly library: Library;
}

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

interface MixedRound {
  readonly plainCyclesPerSec: number;
  readonly plainP99Ms: number;
  readonly plainErrors: number;
  /** Synced calls by outcome: ok, or the code of the node's cause. */
  readonly synced: Record<string, number>;
}

function codeOf(error: unknown): string {
  const cause = (error as { outcomes?: { error?: { code?: string } }[] }).outcomes?.[0]?.error;
  return cause?.code ?? (error as { code?: string }).code ?? String(error);
}

/** 64 workers on one client: unsynced cycles on `plain`, synced tryAcquire cycles on `synced`. */
async function mixedOnOneClient(plain: Locker, synced: Locker, keyPrefix: string): Promise<MixedRound> {
  const cycleMs: number[] = [];
  let plainErrors = 0;
  const outcomes: Record<string, number> = {};
  const started = now();
  const end = started + PARALLEL_MS;
  const plainWorker = async (index: number): Promise<void> => {
    while (now() < end) {
      const cycleStart = now();
      try {
        await (await plain.acquire(`${keyPrefix}:p${index}`, TTL_MS, { acquireTimeoutMs: 0 })).release();
        cycleMs.push(now() - cycleStart);
      } catch {
        plainErrors++;
      }
    }
  };
  const syncedWorker = async (index: number): Promise<void> => {
    while (now() < end) {
      let outcome: string;
      try {
        const lock = await synced.tryAcquire(`${keyPrefix}:s${index}`, TTL_MS);
        outcome = lock ? 'ok' : 'held';
        await lock?.release();
      } catch (error) {
        outcome = codeOf(error).replace(/^QUORUMLOCK_/, '');
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  };
  await Promise.all([
    ...Array.from({ length: WORKERS - SYNCED_WORKERS }, (_, index) => plainWorker(index)),
    ...Array.from({ length: SYNCED_WORKERS }, (_, index) => syncedWorker(index)),
  ]);
  return {
    plainCyclesPerSec: (cycleMs.length / (now() - started)) * 1000,
    plainP99Ms: quantile(cycleMs, 0.99),
    plainErrors,
    synced: outcomes,
  };
}

/** Until the replica has every write so far: WAIT covers its own connection's writes, so it writes first. */
async function caughtUp(admin: Redis): Promise<void> {
  await admin.set('qlbench-sync:caught-up', String(now()));
  if ((await admin.wait(1, 10_000)) < 1) throw new Error('the replica did not catch up within 10 s');
}

function mergeCounts(rounds: readonly Record<string, number>[]): string {
  const total: Record<string, number> = {};
  for (const round of rounds) for (const [code, count] of Object.entries(round)) total[code] = (total[code] ?? 0) + count;
  return Object.entries(total)
    .sort((a, b) => b[1] - a[1])
    .map(([code, count]) => `${code} ${count}`)
    .join(', ');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, candidate: { type: 'string' } } });
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
    const builds: Build[] = [{ label: 'this tree', library: await buildLibrary() }];
    if (values.candidate !== undefined) builds.push({ label: 'candidate', library: await buildLibrary(values.candidate, 'candidate') });
    const client = (): Redis => {
      const made = new Redis({ host: master.host, port: master.port });
      clients.push(made);
      return made;
    };
    const admin = client();
    await caughtUp(admin);
    const lockers = builds.flatMap((build) =>
      [false, true].map((sync) => ({
        build,
        sync,
        label: `${build.label}, ${sync ? 'with sync' : 'without sync'}`,
        locker: new build.library.RedisLock(client(), sync ? { syncReplicas: { replicas: 1 } } : {}),
      })),
    );
    const oneClient = new Map(
      builds.map((build) => {
        const shared = client();
        return [build, { plain: new build.library.RedisLock(shared), synced: new build.library.RedisLock(shared, { syncReplicas: { replicas: 1 } }) }];
      }),
    );
    const up: Record<string, { p50Us: number[]; cyclesPerSec: number[]; errors: number }> = {};
    const mixed: Record<string, MixedRound[]> = {};
    for (let round = 0; round < rounds; round++) {
      for (const { label, locker, sync } of round % 2 === 0 ? lockers : [...lockers].reverse()) {
        const prefix = `qlbench-sync:${round}:${label}:${sync ? 's' : 'n'}`;
        const single = await uncontendedP50Us(locker, `${prefix}:k`);
        const parallel = await parallelCyclesPerSec(locker, prefix);
        const row = (up[label] ??= { p50Us: [], cyclesPerSec: [], errors: 0 });
        row.p50Us.push(single.p50Us);
        row.cyclesPerSec.push(parallel.cyclesPerSec);
        row.errors += single.errors + parallel.errors;
      }
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const { plain, synced } = oneClient.get(build) as { plain: Locker; synced: Locker };
        for (const down of round % 2 === 0 ? [false, true] : [true, false]) {
          if (down) await replica.pause();
          try {
            const result = await mixedOnOneClient(plain, synced, `qlbench-sync:${round}:${build.label}:${down ? 'down' : 'up'}`);
            (mixed[`${build.label}, replica ${down ? 'down' : 'up'}`] ??= []).push(result);
          } finally {
            if (down) {
              await replica.resume();
              await caughtUp(admin);
            }
          }
        }
      }
      process.stderr.write(`[bench:sync] round ${round + 1}/${rounds}\n`);
    }
    console.log(`master + 1 replica (local, hz 10), ${rounds} rounds, medians:`);
    console.log('\nreplica up, one locker per client');
    console.log('variant                     | uncontended p50 | 64 workers     | errors');
    for (const [label, row] of Object.entries(up)) {
      console.log(`${label.padEnd(27)} | ${median(row.p50Us).toFixed(0).padStart(11)} µs | ${median(row.cyclesPerSec).toFixed(0).padStart(8)} cyc/s | ${row.errors}`);
    }
    for (const build of builds) {
      const without = up[`${build.label}, without sync`];
      const withSync = up[`${build.label}, with sync`];
      if (!without || !withSync) continue;
      console.log(
        `${build.label}: with sync / without: uncontended p50 ${(median(withSync.p50Us) / median(without.p50Us)).toFixed(2)}×, ` +
          `64-worker throughput ${(median(withSync.cyclesPerSec) / median(without.cyclesPerSec)).toFixed(2)}×`,
      );
    }
    console.log(`\n64 workers on one client: ${WORKERS - SYNCED_WORKERS} unsynced (acquire + release), ${SYNCED_WORKERS} synced (tryAcquire)`);
    console.log('variant                     | unsynced cyc/s | unsynced p99 | unsynced errors | synced outcomes (all rounds)');
    for (const [label, results] of Object.entries(mixed)) {
      console.log(
        `${label.padEnd(27)} | ${median(results.map((r) => r.plainCyclesPerSec)).toFixed(0).padStart(14)} | ` +
          `${median(results.map((r) => r.plainP99Ms)).toFixed(1).padStart(9)} ms | ${String(results.reduce((n, r) => n + r.plainErrors, 0)).padStart(15)} | ` +
          mergeCounts(results.map((r) => r.synced)),
      );
    }
    for (const build of builds) {
      const upRounds = mixed[`${build.label}, replica up`];
      const downRounds = mixed[`${build.label}, replica down`];
      if (!upRounds || !downRounds) continue;
      console.log(
        `${build.label}: replica down / up: unsynced throughput ${(median(downRounds.map((r) => r.plainCyclesPerSec)) / median(upRounds.map((r) => r.plainCyclesPerSec))).toFixed(2)}×, ` +
          `p99 ${(median(downRounds.map((r) => r.plainP99Ms)) / median(upRounds.map((r) => r.plainP99Ms))).toFixed(2)}×`,
      );
    }
  } finally {
    for (const made of clients) made.disconnect();
    if (replica?.isPaused) await replica.resume();
    await Promise.allSettled([master.stop(), replica?.stop()]);
    await removeBuilds();
  }
}

await main();
