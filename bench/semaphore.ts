/**
 * `npm run bench:semaphore`: the semaphore and the read-write lock, in one
 * run, taking turns round by round so every contender meets the same moments
 * of a noisy machine; medians over the rounds, and ratios.
 *
 * On 1 and 5 local nodes:
 * - uncontended acquire + release p50: quorumlock's mutex, its semaphore
 *   (limit 4), redis-semaphore's Semaphore (1 node) / RedlockSemaphore (5);
 * - 64 workers on distinct resources: cycles/s and Redis commands per cycle;
 * - 64 waiters in this process on one resource with limit 4, 1 ms hold:
 *   critical sections/s, commands per section, wait p99;
 * - 64 waiters across 8 processes (8 each), the same resource, limit and
 *   hold (semaphore and redis-semaphore): critical sections/s, requests per
 *   section (what the processes' clients sent), wait p99.
 * On 1 node, the read-write lock: 16 readers on one resource (1 ms reads),
 * alone and with a writer every 10 ms: reader throughput, writer wait p99.
 *
 *   npm run bench:semaphore                 # 5 rounds
 *   npm run bench:semaphore -- --rounds 9
 *   npm run bench:semaphore -- --baseline ../other-checkout  # also its semaphore and read-write lock, interleaved (before/after)
 */
import { setMaxListeners } from 'node:events';
import { parseArgs } from 'node:util';
import { type ClientGroup, openClients } from './clients.js';
import { buildLibrary, type Library, libraryUrl, removeBuilds } from './library.js';
import { openNodes } from './nodes.js';
import { buildBenchScript } from './procs/build.js';
import { now } from './scenarios/clock.js';
import { type Cycle, cycleOf, type Kind, LIMIT, TTL_MS } from './semaphore/cycles.js';
import { SemaphoreProcesses } from './semaphore/processes.js';
import { median, quantile } from './stats.js';

const UNCONTENDED_CYCLES = 300;
const UNCONTENDED_BLOCK = 20;
const WORKERS = 64;
const PHASE_MS = 1_000;
const HOLD_MS = 1;
/** The semaphore of the --baseline checkout. */
const BASELINE_SEMAPHORE = 'quorumlock semaphore (baseline)';
/** The across-process case: 8 processes of 8 waiters. */
const PROCESSES = 8;
const WAITERS_PER_PROCESS = 8;

interface Contender {
  readonly name: string;
  readonly group: ClientGroup;
  readonly cycle: Cycle;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each contender's uncontended acquire + release p50 (µs) in one round. They
 * take turns every UNCONTENDED_BLOCK cycles: a spell of a noisy machine then
 * falls on all of them alike, where one contender's 300 cycles in a row could
 * meet it alone (the ratio of two such p50s moved by ±20% run to run).
 */
async function uncontendedP50sUs(contenders: readonly Contender[], keyOf: (contender: Contender) => string): Promise<number[]> {
  const times = contenders.map((): number[] => []);
  for (let done = 0; done < UNCONTENDED_CYCLES; done += UNCONTENDED_BLOCK) {
    for (const [index, contender] of contenders.entries()) {
      const key = keyOf(contender);
      for (let i = 0; i < UNCONTENDED_BLOCK; i++) {
        const started = now();
        await (await contender.cycle(key))();
        times[index]!.push(now() - started);
      }
    }
  }
  return times.map((t) => quantile(t, 0.5) * 1000);
}

/** `workers` loops for PHASE_MS; `key(i)` names each worker's resource; returns cycles/s, commands per cycle, wait p99 (ms). */
async function loops(contender: Contender, workers: number, key: (i: number) => string, holdMs: number) {
  const waits: number[] = [];
  let cycles = 0;
  await contender.group.quiet();
  const sentBefore = contender.group.requests();
  const started = now();
  const end = started + PHASE_MS;
  await Promise.all(
    Array.from({ length: workers }, async (_, i) => {
      while (now() < end) {
        const asked = now();
        try {
          const release = await contender.cycle(key(i));
          waits.push(now() - asked);
          if (holdMs > 0) await sleep(holdMs);
          await release();
          cycles++;
        } catch {
          // A wait that timed out counts as no cycle.
        }
      }
    }),
  );
  const elapsed = now() - started;
  await contender.group.quiet();
  return { perSec: (cycles / elapsed) * 1000, commandsPer: (contender.group.requests() - sentBefore) / Math.max(cycles, 1), waitP99: quantile(waits, 0.99) };
}

/**
 * One round of the across-process case: critical sections/s, requests per
 * section (as the workers' clients sent them: the servers' command counts
 * would also count the commands a script runs), wait p99.
 */
async function acrossProcesses(processes: SemaphoreProcesses, key: string) {
  const { sections, waits, requests } = await processes.round(key);
  return { perSec: (sections / PHASE_MS) * 1000, requestsPer: requests / Math.max(sections, 1), waitP99: quantile([...waits], 0.99) };
}

interface Row {
  p50Us: number[];
  workers: number[];
  workerCommands: number[];
  contended: number[];
  contendedCommands: number[];
  waitP99: number[];
  procs: number[];
  procsRequests: number[];
  procsWaitP99: number[];
}

async function readWriteRound(library: Library, group: ClientGroup, round: number, withWriter: boolean, build = 0) {
  const rw = new library.RedisReadWriteLock(group.clients[0]!, { acquireTimeoutMs: 30_000, writerClaimMs: 200, retry: { retries: 10_000, baseDelayMs: 2, maxDelayMs: 20 } });
  const resource = `qlbench-rw:${build}:${round}:${withWriter ? 'w' : 'r'}`;
  const end = now() + PHASE_MS;
  let reads = 0;
  const writerWaits: number[] = [];
  const readers = Array.from({ length: 16 }, async () => {
    while (now() < end) {
      const lock = await rw.read.acquire(resource, TTL_MS);
      await sleep(HOLD_MS);
      await lock.release();
      reads++;
    }
  });
  const writer = withWriter
    ? (async () => {
        while (now() < end) {
          await sleep(10);
          const asked = now();
          const lock = await rw.write.acquire(resource, TTL_MS);
          writerWaits.push(now() - asked);
          await sleep(HOLD_MS);
          await lock.release();
        }
      })()
    : Promise.resolve();
  await Promise.all([...readers, writer]);
  return { readsPerSec: (reads / PHASE_MS) * 1000, writerWaitP99: writerWaits.length > 0 ? quantile(writerWaits, 0.99) : Number.NaN, writes: writerWaits.length };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, baseline: { type: 'string' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  setMaxListeners(WORKERS * 8);
  const pool = await openNodes([], 5);
  const groups: ClientGroup[] = [];
  const started: SemaphoreProcesses[] = [];
  try {
    const library = await buildLibrary();
    // Another checkout's build (the code before a change), measured beside this one's in the same rounds.
    const baseline = values.baseline === undefined ? undefined : await buildLibrary(values.baseline, 'baseline');
    const workerScript = await buildBenchScript('semaphore-worker', 'bench/semaphore/worker.ts');
    const open = async (n: number) => {
      const group = await openClients(pool.urls.slice(0, n));
      groups.push(group);
      return group;
    };
    const lines: string[] = [];
    for (const n of [1, 5]) {
      const contenders: Contender[] = [];
      const peerName = n === 1 ? 'redis-semaphore Semaphore' : 'redis-semaphore RedlockSemaphore';
      const kinds: [name: string, kind: Kind, build: 'current' | 'baseline'][] = [
        ['quorumlock mutex', 'mutex', 'current'],
        ['quorumlock semaphore', 'semaphore', 'current'],
        ...(baseline ? [[BASELINE_SEMAPHORE, 'semaphore', 'baseline'] as [string, Kind, 'baseline']] : []),
        [peerName, 'peer', 'current'],
      ];
      for (const [name, kind, build] of kinds) {
        const group = await open(n);
        contenders.push({ name, group, cycle: cycleOf(kind, build === 'baseline' ? baseline! : library, group.clients) });
      }
      const urls = pool.urls.slice(0, n);
      const config = { urls, waiters: WAITERS_PER_PROCESS, phaseMs: PHASE_MS, holdMs: HOLD_MS };
      const processesOf = new Map<string, SemaphoreProcesses>();
      for (const [name, kind, build] of kinds.filter(([, kind]) => kind !== 'mutex')) {
        const processes = await SemaphoreProcesses.start(workerScript, { ...config, kinds: [kind], libraryUrl: libraryUrl(build) }, PROCESSES);
        started.push(processes);
        processesOf.set(name, processes);
      }
      const rows = new Map<string, Row>(
        contenders.map((c) => [c.name, { p50Us: [], workers: [], workerCommands: [], contended: [], contendedCommands: [], waitP99: [], procs: [], procsRequests: [], procsWaitP99: [] }]),
      );
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? contenders : [...contenders].reverse();
        const prefixOf = (contender: Contender) => `qlbench-sem:${n}:${round}:${contenders.indexOf(contender)}`;
        const p50s = await uncontendedP50sUs(order, (contender) => `${prefixOf(contender)}:u`);
        for (const [index, contender] of order.entries()) rows.get(contender.name)!.p50Us.push(p50s[index]!);
        for (const contender of order) {
          const row = rows.get(contender.name)!;
          const prefix = prefixOf(contender);
          const parallel = await loops(contender, WORKERS, (i) => `${prefix}:w${i}`, 0);
          row.workers.push(parallel.perSec);
          row.workerCommands.push(parallel.commandsPer);
          const contended = await loops(contender, WORKERS, () => `${prefix}:hot`, HOLD_MS);
          row.contended.push(contended.perSec);
          row.contendedCommands.push(contended.commandsPer);
          row.waitP99.push(contended.waitP99);
          const processes = processesOf.get(contender.name);
          if (processes) {
            const across = await acrossProcesses(processes, `${prefix}:procs`);
            row.procs.push(across.perSec);
            row.procsRequests.push(across.requestsPer);
            row.procsWaitP99.push(across.waitP99);
          }
        }
        process.stderr.write(`[bench:semaphore] ${n} node(s), round ${round + 1}/${rounds}\n`);
      }
      lines.push(`\n${n} node(s), ${rounds} rounds, medians (limit ${LIMIT}; 64 waiters in one process, ${HOLD_MS} ms hold):`);
      lines.push('contender                         | uncontended p50 | 64 workers cyc/s (cmds/cyc) | 64 waiters cs/s (cmds/cs, wait p99)');
      for (const [name, row] of rows) {
        lines.push(
          `${name.padEnd(33)} | ${median(row.p50Us).toFixed(0).padStart(11)} µs | ${median(row.workers).toFixed(0).padStart(10)} (${median(row.workerCommands).toFixed(1)}) | ` +
            `${median(row.contended).toFixed(0).padStart(7)} (${median(row.contendedCommands).toFixed(1)}, ${median(row.waitP99).toFixed(1)} ms)`,
        );
      }
      lines.push(`${PROCESSES} processes × ${WAITERS_PER_PROCESS} waiters, one resource, limit ${LIMIT}: cs/s (requests/cs, wait p99)`);
      for (const [name, row] of rows) {
        if (row.procs.length === 0) continue;
        lines.push(`${name.padEnd(33)} | ${median(row.procs).toFixed(0).padStart(7)} (${median(row.procsRequests).toFixed(1)}, ${median(row.procsWaitP99).toFixed(1)} ms)`);
      }
      const mutex = rows.get('quorumlock mutex')!;
      const semaphore = rows.get('quorumlock semaphore')!;
      const perRound = semaphore.p50Us.map((p50, round) => p50 / mutex.p50Us[round]!);
      lines.push(
        `semaphore / mutex uncontended p50: ${(median(semaphore.p50Us) / median(mutex.p50Us)).toFixed(2)}× ` +
          `(per round: median ${median(perRound).toFixed(2)}×, ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}×)`,
      );
      const peerRow = rows.get(peerName)!;
      const before = rows.get(BASELINE_SEMAPHORE);
      if (before) {
        lines.push(
          `semaphore / baseline semaphore: uncontended p50 ${(median(semaphore.p50Us) / median(before.p50Us)).toFixed(2)}×, 64 waiters cs/s ${(median(semaphore.contended) / median(before.contended)).toFixed(2)}×, ` +
            `across processes cs/s ${(median(semaphore.procs) / median(before.procs)).toFixed(2)}×`,
        );
      }
      lines.push(
        `semaphore / redis-semaphore: uncontended p50 ${(median(semaphore.p50Us) / median(peerRow.p50Us)).toFixed(2)}×, 64 waiters cs/s ${(median(semaphore.contended) / median(peerRow.contended)).toFixed(2)}×, ` +
          `across processes cs/s ${(median(semaphore.procs) / median(peerRow.procs)).toFixed(2)}×`,
      );
    }
    const rw = await open(1);
    const builds: [name: string, build: Library][] = [['', library], ...(baseline ? [['baseline ', baseline] as [string, Library]] : [])];
    const readOnly = builds.map((): number[] => []);
    const mixed = builds.map((): { reads: number; wait: number; writes: number }[] => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, [, build]] of builds.entries()) {
        readOnly[index]!.push((await readWriteRound(build, rw, round, false, index)).readsPerSec);
        const m = await readWriteRound(build, rw, round, true, index);
        mixed[index]!.push({ reads: m.readsPerSec, wait: m.writerWaitP99, writes: m.writes });
      }
    }
    for (const [index, [name]] of builds.entries()) {
      const runs = mixed[index]!;
      lines.push(`\n${name}read-write lock, 1 node, 16 readers (${HOLD_MS} ms reads), ${rounds} rounds, medians:`);
      lines.push(`readers only: ${median(readOnly[index]!).toFixed(0)} reads/s`);
      lines.push(
        `with a writer every 10 ms: ${median(runs.map((m) => m.reads)).toFixed(0)} reads/s, ${median(runs.map((m) => m.writes)).toFixed(0)} writes/s, writer wait p99 ${median(runs.map((m) => m.wait)).toFixed(1)} ms`,
      );
    }
    console.log(lines.join('\n'));
  } finally {
    await Promise.all(started.map((processes) => processes.close()));
    for (const group of groups) group.close();
    await pool.close();
    await removeBuilds();
  }
}

await main();
