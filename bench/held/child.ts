/**
 * One measurement of the held scenario, in a process of its own (so that
 * its heap, CPU and event loop are one library's alone): holds `count`
 * locks, waits `settleMs`, measures `durationMs` of steady state (then the
 * event loop's delay and the heap's growth over `delayWindowMs`), releases
 * them all, prints one JSON line (HeldSample) and exits by itself.
 * Run by bench/held/run.ts with --expose-gc.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { type IntervalHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { openAdminClient, openClients } from '../clients.js';
import type { Library } from '../library.js';
import { difference, snapshot } from '../serverStats.js';
import { type HeldLibrary, makeHolder, renewalCommand } from './holders.js';
import type { HeldConfig, HeldSample } from './protocol.js';

/** Acquires in flight at once while taking the locks (not measured). */
const ACQUIRE_CONCURRENCY = 64;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

async function measure(config: HeldConfig): Promise<HeldSample> {
  const lib = (await import(config.libraryUrl)) as Library;
  const group = await openClients(config.urls);
  const admins = await Promise.all(config.urls.map((url) => openAdminClient(url)));
  try {
    let lost = 0;
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const holder = makeHolder(config.library as HeldLibrary, group.clients, lib);
    const heapBefore = heapAfterGc();
    const holds: ReturnType<typeof holder>[] = [];
    for (let start = 0; start < config.count; start += ACQUIRE_CONCURRENCY) {
      const wave = [];
      for (let i = start; i < Math.min(config.count, start + ACQUIRE_CONCURRENCY); i++) {
        const hold = holder(`${config.keyPrefix}:${i}`, config.ttlMs, stopped, () => lost++);
        holds.push(hold);
        wave.push(hold.held);
      }
      await Promise.all(wave);
    }
    await sleep(config.settleMs);

    let gcPauses = 0;
    let gcPauseMs = 0;
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        gcPauses++;
        gcPauseMs += entry.duration;
      }
    });
    // No forced collection before or in the CPU window: `gc()` left V8 sizing
    // the old generation tighter for minutes after (measured with 10,000 locks:
    // 1.8-2.3 µs of CPU per lock per s in four 20 s windows after it, against
    // 1.1-1.6 without it, helper threads 3-4x busier), a state no user's
    // process is in. The heap is weighed after the window.
    const serverBefore = await Promise.all(admins.map((admin) => snapshot([admin])));
    const requestsBefore = group.requests();
    const profiler = config.profileDir === undefined ? undefined : await startProfiler();
    const mainBefore = mainThreadCpuMs();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    gcObserver.observe({ entryTypes: ['gc'] });
    await sleep(config.durationMs);
    gcObserver.disconnect();
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const mainAfter = mainThreadCpuMs();
    if (profiler && config.profileDir !== undefined) await profiler.stopInto(config.profileDir, `${config.library}-${config.urls.length}n-${config.count}.cpuprofile`);
    const requests = group.requests() - requestsBefore;
    const serverAfter = await Promise.all(admins.map((admin) => snapshot([admin])));
    const heapStart = heapAfterGc();
    const delay = await loopDelayOver(config.delayWindowMs);
    const heapEnd = heapAfterGc();

    const perNode = serverAfter.map((after, i) => difference(serverBefore[i] as typeof after, after));
    const commands = perNode.map((stats) => [...stats.values()].reduce((sum, entry) => sum + entry.calls, 0));
    // A renewal of one holder on one node (renewalCommand). No lock is taken in the window.
    const renewals = perNode.map((stats) => stats.get(renewalCommand(config.library))?.calls ?? 0);
    const nodes = config.urls.length;
    const meanOf = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

    stop();
    const releaseErrors = (await Promise.all(holds.map((hold) => hold.done))).filter((error) => error !== undefined).length;
    return {
      library: config.library,
      nodes,
      count: config.count,
      seconds,
      reqsPerNodePerS: requests / nodes / seconds,
      cmdsPerNodePerS: meanOf(commands) / seconds,
      renewalsPerLockPerS: meanOf(renewals) / config.count / seconds,
      reqsPer100Renewals: meanOf(renewals) > 0 ? (100 * requests) / nodes / meanOf(renewals) : Number.NaN,
      cpuUsPerLockPerS: (cpu.user + cpu.system) / config.count / seconds,
      cpuPercent: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
      cpuSystemShare: cpu.system / (cpu.user + cpu.system),
      cpuMainThreadShare: mainBefore === undefined || mainAfter === undefined ? Number.NaN : ((mainAfter - mainBefore) * 1000) / (cpu.user + cpu.system),
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      loopDelayMaxMs: delay.max / 1e6,
      heapBeforeMb: heapBefore / 2 ** 20,
      heapStartMb: heapStart / 2 ** 20,
      heapEndMb: heapEnd / 2 ** 20,
      lost,
      releaseErrors,
      gcPausesPerS: gcPauses / seconds,
      gcPauseMsPerS: gcPauseMs / seconds,
    };
  } finally {
    group.close();
    for (const admin of admins) admin.disconnect();
  }
}

/**
 * CPU time of the process's main thread so far, in ms (Linux's per-thread
 * counters, in ticks of 10 ms); undefined elsewhere. The rest of the
 * process's CPU is V8's helper threads: garbage collection, mostly.
 */
function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * The event loop's delay, sampled every 10 ms for `ms`, after the CPU window
 * rather than during it: the sampling timer alone cost an idle process here
 * ~7 ms of CPU per second, as much as 10,000 locks' renewals.
 */
async function loopDelayOver(ms: number): Promise<IntervalHistogram> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  await sleep(ms);
  delay.disable();
  return delay;
}

/** The inspector's sampling profiler, started now: what `node --cpu-prof` records, for the measured window only. */
async function startProfiler(): Promise<{ stopInto(dir: string, name: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 0.1 ms, not the default 1 ms: a held child is idle most of the time, and its busy samples are few.
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stopInto(dir, name) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, name), JSON.stringify(profile));
    },
  };
}

const config = JSON.parse(process.argv[2] ?? '{}') as HeldConfig;
measure(config).then(
  (sample) => process.stdout.write(`${JSON.stringify(sample)}\n`),
  (error: unknown) => {
    process.stderr.write(`held child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
