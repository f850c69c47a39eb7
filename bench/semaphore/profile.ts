/**
 * `npm run bench:semaphore:profile`: where a contended permit's requests go.
 * One contender (quorumlock's semaphore, its mutex, its read-write lock's
 * readers and writers, or redis-semaphore) for one phase on one resource, in
 * one process (64 waiters) or across 8 processes (8 waiters each), on 1 or 5
 * local nodes. Node 0 is watched with MONITOR for the phase: every request a
 * client sent, by script (EVALSHA's SHA1 named from src/scripts) and mode,
 * and every command a script ran inside, per critical section.
 *
 *   npm run bench:semaphore:profile -- --nodes 5 --kind semaphore
 *   npm run bench:semaphore:profile -- --nodes 1 --kind peer --one-process
 *   npm run bench:semaphore:profile -- --nodes 5 --kind rwlock --writers 1
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { openClients } from '../clients.js';
import { buildLibrary, libraryUrl, removeBuilds } from '../library.js';
import { openNodes } from '../nodes.js';
import { buildBenchScript } from '../procs/build.js';
import { now } from '../scenarios/clock.js';
import { cycleOf, type Kind } from './cycles.js';
import { SemaphoreProcesses } from './processes.js';
import * as scripts from '../../src/scripts/index.js';
import * as semaphoreScripts from '../../src/scripts/semaphore.js';
import * as readWriteScripts from '../../src/scripts/readWrite.js';
import { quantile } from '../stats.js';

const PHASE_MS = 1_000;
const HOLD_MS = 1;

/** SHA1 → script name, from every LuaScript the scripts modules export. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const module of [scripts, semaphoreScripts, readWriteScripts]) {
    for (const value of Object.values(module)) {
      if (value instanceof scripts.LuaScript) names.set(value.sha, value.name);
    }
  }
  return names;
}

/** The mode word a script call carries, where it has one (a semaphore's 'line'/'probe', a release's announce). */
function modeOf(name: string, args: readonly string[]): string {
  const keyCount = Number(args[2]);
  const argv = args.slice(3 + keyCount);
  if (name === 'semaphoreAcquire') return argv[3] ?? 'plain';
  if (name === 'semaphoreTake') return argv[4] ?? 'plain';
  if (name === 'semaphoreRelease') return argv[2] === undefined ? '' : 'rejoin';
  if (name === 'acquire' || name === 'release') return argv[1] ?? '';
  if (name === 'rwRead') return argv[2] ?? 'plain';
  if (name === 'rwWrite') return argv[4] ?? 'plain';
  return '';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '1' },
      kind: { type: 'string', default: 'semaphore' },
      'one-process': { type: 'boolean', default: false },
      writers: { type: 'string', default: '0' },
    },
  });
  const nodeCount = Number(values.nodes);
  const kind = values.kind as Kind;
  const pool = await openNodes([], nodeCount);
  const names = scriptNames();
  let processes: SemaphoreProcesses | undefined;
  try {
    await buildLibrary();
    const key = `qlprofile:${kind}`;
    const monitor = new Redis(pool.urls[0]!);
    const requests = new Map<string, number>();
    const inner = new Map<string, number>();
    const count = (map: Map<string, number>, name: string) => map.set(name, (map.get(name) ?? 0) + 1);
    let running = false;
    const watch = await monitor.monitor();
    watch.on('monitor', (_time: string, args: string[], source: string) => {
      if (!running) return;
      const command = (args[0] ?? '').toUpperCase();
      if (source.startsWith('lua')) {
        count(inner, command === 'PUBLISH' ? `PUBLISH ${(args[1] ?? '').split(':')[1] ?? ''}` : command);
        return;
      }
      if (command === 'EVALSHA' || command === 'EVAL') {
        const name = names.get(args[1] ?? '') ?? (command === 'EVAL' ? 'eval' : `sha ${(args[1] ?? '').slice(0, 8)}`);
        const mode = modeOf(name, args);
        count(requests, mode ? `${name} ${mode}` : name);
      } else count(requests, command);
    });
    let sections = 0;
    let waits: number[] = [];
    let sent = 0;
    if (values['one-process']) {
      const library = await import(libraryUrl());
      const group = await openClients(pool.urls);
      const cycle = cycleOf(kind, library, group.clients);
      for (let i = 0; i < 5; i++) await (await cycle(`${key}:warm`))();
      running = true;
      const sentBefore = group.requests();
      const end = now() + PHASE_MS;
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (now() < end) {
            const asked = now();
            const release = await cycle(key);
            waits.push(now() - asked);
            await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
            await release();
            sections++;
          }
        }),
      );
      await group.quiet();
      sent = group.requests() - sentBefore;
      group.close();
    } else {
      const script = await buildBenchScript('semaphore-worker', 'bench/semaphore/worker.ts');
      processes = await SemaphoreProcesses.start(script, { libraryUrl: libraryUrl(), urls: pool.urls, kinds: [kind], waiters: 8, phaseMs: PHASE_MS, holdMs: HOLD_MS }, 8);
      running = true;
      // A read-write lock's: the first `writers` waiters of each process write.
      const report = await processes.round(key, 0, Number(values.writers));
      sections = report.sections;
      waits = [...report.waits];
      sent = report.requests;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    running = false;
    watch.disconnect();
    monitor.disconnect();
    const per = (n: number) => (n / Math.max(sections, 1)).toFixed(2);
    const lines = [
      `${kind}, ${nodeCount} node(s), ${values['one-process'] ? '64 waiters in one process' : '8 processes x 8 waiters'}: ${sections} sections/s, ` +
        `${per(sent)} requests per section (all nodes), wait p50 ${quantile(waits, 0.5).toFixed(1)} ms p99 ${quantile(waits, 0.99).toFixed(1)} ms`,
      `node 0, requests per section:`,
      ...[...requests].sort((a, b) => b[1] - a[1]).map(([name, n]) => `  ${name.padEnd(34)} ${per(n)}`),
      `node 0, commands run inside scripts per section:`,
      ...[...inner].sort((a, b) => b[1] - a[1]).map(([name, n]) => `  ${name.padEnd(34)} ${per(n)}`),
    ];
    console.log(lines.join('\n'));
  } finally {
    await processes?.close();
    await pool.close();
    await removeBuilds();
  }
}

await main();
