/**
 * `npm run bench:systems`: quorumlock's locks beside the locks of etcd,
 * ZooKeeper and Postgres, each taken as its users take it, in one run on
 * loopback servers this run starts in a temporary folder and stops at the
 * end (also on failure or Ctrl-C: the test harness's process registry kills
 * what is left):
 *
 * - Redis: 5 nodes (no persistence: --save '' --appendonly no), and one
 *   Sentinel group (a master, 2 replicas, 3 sentinels) for syncReplicas;
 * - etcd: 3 members; ZooKeeper: 3 servers (both fsync every write);
 * - Postgres: one server (fsync on; advisory locks write no WAL).
 *
 * Contenders take turns inside each round, so a noisy spell of the machine
 * falls on all of them; medians over the rounds. Then, once each: fsyncs per
 * cycle (strace), kill -9 of a holder, and a server killed mid-run.
 *
 *   npm run bench:systems                  # 5 rounds
 *   npm run bench:systems -- --rounds 9
 *   npm run bench:systems -- --no-docs     # leave docs/data and the guide as they are
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNodes } from '../../test/support/harness.js';
import { pidExists } from '../../test/support/processRegistry.js';
import { SentinelGroup } from '../../test/support/SentinelGroup.js';
import { buildLibrary, libraryUrl, removeBuilds, ROOT } from '../library.js';
import { buildBenchScript } from '../procs/build.js';
import { countFsyncs, footprint } from './cost.js';
import { refreshGuide } from './docs.js';
import { openSystem } from './locks/open.js';
import type { Holder, LockSystem, SystemSpec } from './locks/types.js';
import { machine, renderReport, type SystemsResult, type ContenderResult } from './results.js';
import { renderChart } from './chart.js';
import { cycles, distinct, hot, killHolder, underFault } from './scenarios.js';
import { EtcdCluster } from './servers/etcd.js';
import { missingReason, type SystemName } from './servers/installed.js';
import { PostgresServer } from './servers/postgres.js';
import { ZooKeeperEnsemble } from './servers/zookeeper.js';
import { SystemWorker } from './workers.js';

const UNCONTENDED_CYCLES = 200;
const UNCONTENDED_BLOCK = 20;
const DISTINCT_HOLDERS = 64;
const PHASE_MS = 1_500;
const HOT_PROCESSES = 8;
const HOT_WAITERS = 8;
const HOLD_MS = 1;
const FSYNC_CYCLES = 100;
/** How long a dead holder keeps its lock: Redis TTL, etcd lease TTL, ZooKeeper session timeout alike. */
const LIVENESS_MS = 5_000;
const FAULT_HOLDERS = 8;
const FAULT_PHASE_MS = 8_000;
const FAULT_AT_MS = 2_000;
const FOLDER_PREFIX = 'qlbench-systems-';

interface Contender {
  readonly id: string;
  readonly label: string;
  readonly spec: SystemSpec;
  readonly servers: string;
  readonly serverPids: () => number[];
  /** The server fault this contender is put through, if one fits it. */
  readonly fault?: { readonly what: string; readonly run: () => Promise<unknown> };
}

interface Opened {
  readonly contender: Contender;
  readonly system: LockSystem;
  readonly single: Holder;
  readonly many: readonly Holder[];
  readonly workers: SystemWorker[];
  readonly result: ContenderResult;
}

const log = (message: string) => process.stderr.write(`[bench:systems] ${message}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, out: { type: 'string', default: 'bench/results' }, 'no-docs': { type: 'boolean', default: false } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const missing = (['etcd', 'zookeeper', 'postgres'] as SystemName[]).map(missingReason).filter((r) => r !== undefined);
  if (missing.length > 0) throw new Error(`cannot run: ${missing.join('; ')}`);

  const wallStarted = performance.now();
  const startedAt = new Date().toISOString();
  removeStaleFolders();
  const dir = mkdtempSync(join(tmpdir(), `${FOLDER_PREFIX}${process.pid}-`));
  const stops: (() => Promise<unknown>)[] = [];
  const opened: Opened[] = [];
  try {
    log(`starting servers in ${dir}`);
    const [redis, sentinel, etcd, zookeeper, postgres] = await Promise.all([
      startNodes(5),
      SentinelGroup.start({ replicas: 2 }),
      EtcdCluster.start(join(dir, 'etcd')),
      ZooKeeperEnsemble.start(join(dir, 'zookeeper')),
      PostgresServer.start(dir),
    ]);
    stops.push(() => redis.stopAll(), () => sentinel.stop(), () => etcd.stop(), () => zookeeper.stop(), () => postgres.stop());
    // After the process registry's own hooks (installed by the first server): on Ctrl-C it kills every
    // server first; then this exits, and the folder goes once nothing writes to it any more.
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
    await buildLibrary();
    const script = await buildBenchScript('systems-worker', 'bench/systems/worker.ts');
    const library = libraryUrl();
    const redisPids = (count: number) => Array.from({ length: count }, (_, i) => redis.node(i).pid).filter((p) => p !== undefined);
    const contenders: Contender[] = [
      { id: 'redislock', label: 'quorumlock RedisLock', servers: '1 Redis node', spec: { system: 'redis', kind: 'RedisLock', libraryUrl: library, ttlMs: LIVENESS_MS, urls: [redis.urls[0]!] }, serverPids: () => redisPids(1) },
      {
        id: 'redlock',
        label: 'quorumlock Redlock',
        servers: '5 Redis nodes',
        spec: { system: 'redis', kind: 'Redlock', libraryUrl: library, ttlMs: LIVENESS_MS, urls: redis.urls },
        serverPids: () => redisPids(5),
        fault: { what: 'one node of 5 killed', run: () => redis.node(4).kill() },
      },
      {
        id: 'redislock-sync',
        label: 'quorumlock RedisLock, syncReplicas 1',
        servers: 'Sentinel group: master, 2 replicas, 3 sentinels',
        spec: { system: 'redis', kind: 'RedisLock', libraryUrl: library, ttlMs: LIVENESS_MS, sentinel: { sentinels: sentinel.sentinelAddresses, name: sentinel.name }, syncReplicas: 1 },
        serverPids: () => [...sentinel.servers, ...sentinel.sentinels].map((s) => s.pid).filter((p) => p !== undefined),
        fault: { what: 'master killed (Sentinel fails over)', run: () => sentinel.failover('kill') },
      },
      {
        id: 'etcd',
        label: 'etcd concurrency mutex',
        servers: '3 etcd members',
        spec: { system: 'etcd', endpoints: etcd.endpoints, ttlSec: LIVENESS_MS / 1000 },
        serverPids: () => etcd.pids(),
        fault: { what: 'leader killed', run: async () => etcd.members[await etcd.leaderIndex()]?.process.kill() },
      },
      {
        id: 'zookeeper',
        label: 'ZooKeeper lock recipe',
        servers: '3 ZooKeeper servers',
        spec: { system: 'zookeeper', connectString: zookeeper.connectString, sessionTimeoutMs: LIVENESS_MS },
        serverPids: () => zookeeper.pids(),
        fault: { what: 'leader killed', run: async () => zookeeper.servers[await zookeeper.leaderIndex()]?.process.kill() },
      },
      { id: 'postgres', label: 'Postgres advisory lock', servers: '1 Postgres server', spec: { system: 'postgres', url: postgres.url }, serverPids: () => postgres.pids() },
    ];

    for (const contender of contenders) {
      const system = await openSystem(contender.spec);
      const single = await system.holder();
      const many = await Promise.all(Array.from({ length: DISTINCT_HOLDERS }, () => system.holder()));
      await (await single.acquire('warm')).release();
      const result: ContenderResult = {
        id: contender.id,
        label: contender.label,
        servers: contender.servers,
        uncontendedP50Ms: [],
        uncontendedP99Ms: [],
        distinctPerSec: [],
        hotPerSec: [],
        hotWaitP99Ms: [],
        hotFairness: [],
        errors: 0,
        processes: 0,
        memoryMB: 0,
        fsyncsPerCycle: null,
        killHolderMs: null,
        fault: null,
      };
      opened.push({ contender, system, single, many, workers: [], result });
    }
    for (const o of opened) {
      log(`starting ${HOT_PROCESSES} worker processes for ${o.contender.label}`);
      for (let i = 0; i < HOT_PROCESSES; i++) o.workers.push(await SystemWorker.start({ bundled: script }, o.contender.spec));
    }

    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? opened : [...opened].reverse();
      const times = new Map(opened.map((o) => [o, [] as number[]]));
      for (let done = 0; done < UNCONTENDED_CYCLES; done += UNCONTENDED_BLOCK) {
        for (const o of order) times.get(o)!.push(...(await cycles(o.single, `u:${round}`, UNCONTENDED_BLOCK)));
      }
      for (const o of order) {
        const sorted = times.get(o)!.sort((a, b) => a - b);
        o.result.uncontendedP50Ms.push(sorted[Math.ceil(sorted.length * 0.5) - 1]!);
        o.result.uncontendedP99Ms.push(sorted[Math.ceil(sorted.length * 0.99) - 1]!);
      }
      for (const o of order) {
        const parallel = await distinct(o.many, `d:${round}`, PHASE_MS);
        o.result.distinctPerSec.push(parallel.perSec);
        o.result.errors += parallel.errors;
        if (round === 0) {
          // While the 64 holders of this phase (and the workers' and the single one) are connected: Postgres has a backend process each.
          const { processes, memoryBytes } = footprint(o.contender.serverPids());
          o.result.processes = processes;
          o.result.memoryMB = memoryBytes / 2 ** 20;
        }
      }
      for (const o of order) {
        const contended = await hot(o.workers, `h:${round}`, HOT_WAITERS, PHASE_MS, HOLD_MS);
        o.result.hotPerSec.push(contended.perSec);
        o.result.hotWaitP99Ms.push(contended.waitP99Ms);
        o.result.hotFairness.push(contended.fairness);
        o.result.errors += contended.errors;
      }
      log(`round ${round + 1}/${rounds} done`);
    }

    for (const o of opened) {
      const calls = await countFsyncs(o.contender.serverPids(), async () => void (await cycles(o.single, 'fsync', FSYNC_CYCLES)));
      o.result.fsyncsPerCycle = calls === undefined ? null : calls / FSYNC_CYCLES;
    }
    log('fsyncs counted; killing holders');
    for (const o of opened) {
      o.result.killHolderMs = await killHolder(o.workers[0]!, o.workers[1]!, 'killed');
      log(`${o.contender.label}: next holder ${o.result.killHolderMs.toFixed(0)} ms after kill -9`);
    }
    for (const o of opened) await Promise.all(o.workers.map((w) => w.close()));
    for (const o of opened) {
      const fault = o.contender.fault;
      if (fault === undefined) continue;
      log(`${o.contender.label}: ${fault.what}, ${FAULT_AT_MS} ms into a ${FAULT_PHASE_MS} ms phase`);
      const outcome = await underFault(o.many.slice(0, FAULT_HOLDERS), 'fault', FAULT_PHASE_MS, FAULT_AT_MS, fault.run);
      o.result.fault = { what: fault.what, ...outcome };
    }

    const result: SystemsResult = {
      meta: {
        startedAt,
        wallSeconds: 0,
        machine: machine(),
        versions: await versions(postgres),
        rounds,
        settings: {
          uncontendedCycles: UNCONTENDED_CYCLES,
          distinctHolders: DISTINCT_HOLDERS,
          phaseMs: PHASE_MS,
          hotProcesses: HOT_PROCESSES,
          hotWaiters: HOT_WAITERS,
          holdMs: HOLD_MS,
          livenessMs: LIVENESS_MS,
          faultHolders: FAULT_HOLDERS,
          faultPhaseMs: FAULT_PHASE_MS,
          faultAtMs: FAULT_AT_MS,
        },
      },
      contenders: opened.map((o) => o.result),
    };
    result.meta.wallSeconds = (performance.now() - wallStarted) / 1000;
    const outDir = join(ROOT, values.out);
    await mkdir(outDir, { recursive: true });
    const stamp = startedAt.replace(/[:.]/g, '-');
    const json = `${JSON.stringify(result, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`;
    await writeFile(join(outDir, `systems-${stamp}.json`), json);
    await writeFile(join(outDir, `systems-${stamp}.svg`), renderChart(result));
    if (!values['no-docs']) {
      await mkdir(join(ROOT, 'docs', 'data'), { recursive: true });
      await writeFile(join(ROOT, 'docs', 'data', 'systems.json'), json);
      await writeFile(join(ROOT, 'docs', 'data', 'systems.svg'), renderChart(result));
      await refreshGuide();
    }
    console.log(renderReport(result));
    console.log(`\nwritten: ${join(values.out, `systems-${stamp}.json`)} and .svg${values['no-docs'] ? '' : '; docs/data/systems.json, docs/data/systems.svg, the guide\'s table'}`);
  } finally {
    for (const o of opened) {
      await Promise.all(o.workers.map((w) => w.kill()));
      await o.system.close().catch(() => undefined);
    }
    await Promise.allSettled(stops.map((stop) => stop()));
    await removeBuilds();
    rmSync(dir, { recursive: true, force: true });
  }
  log(`done in ${((performance.now() - wallStarted) / 1000).toFixed(0)} s`);
}

/**
 * Folders of runs that died before they could remove theirs (their process is gone): under tsx a
 * Ctrl-C may end this process with SIGKILL, before any exit hook; the servers die with it (their
 * parent-death signal), their folders stay.
 */
function removeStaleFolders(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = new RegExp(`^${FOLDER_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid !== undefined && !pidExists(Number(pid))) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

async function versions(postgres: PostgresServer): Promise<SystemsResult['meta']['versions']> {
  const { execFileSync } = await import('node:child_process');
  const redis = /v=(\S+)/.exec(execFileSync(process.env['QUORUMLOCK_REDIS_SERVER'] ?? 'redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? '';
  const etcd = /etcd Version: (\S+)/.exec(execFileSync('etcd', ['--version'], { encoding: 'utf8' }))?.[1] ?? '';
  const { readlinkSync } = await import('node:fs');
  const jar = readdirSync('/usr/share/java').find((f) => /^zookeeper-\d[\d.]*\.jar$/.test(f)) ?? readlinkSync('/usr/share/java/zookeeper.jar');
  const client = postgres.client();
  await client.connect();
  const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
  await client.end();
  return { redis, etcd, zookeeper: jar.replace(/^zookeeper-|\.jar$/g, ''), postgres: rows[0]?.server_version.split(' ')[0] ?? '' };
}

await main();
// Open handles of the other systems' clients (gRPC channels, ZooKeeper reconnects) must not keep the run alive.
process.exit(0);
