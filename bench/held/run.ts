/**
 * `npm run bench:held` (also `npm run bench -- --scenario held`): what it
 * costs to keep many locks held. For 1, 100, 1 000 and 10 000 locks held
 * under using() (or the library's own auto-refresh), on 1 and 5 nodes, each
 * library holds them for `--duration` seconds of steady state (30 s; 10 s
 * with --quick) in a child process of its own, the libraries taking turns
 * in a rotating order at each lock count. Prints a table, the headline
 * ratios at the largest count and node count, and writes JSON and a chart
 * (cost against locks held) beside the other runs' files.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { registerProcess, unregisterProcess } from '../../test/support/processRegistry.js';
import { buildLibrary, libraryUrl, removeBuilds, removeStaleBuilds, ROOT } from '../library.js';
import { openNodes } from '../nodes.js';
import { buildBenchScript } from '../procs/build.js';
import { renderHeldChart } from './chart.js';
import { CANDIDATE, CANDIDATE_SEMAPHORE, HELD_LIBRARIES, HELD_SEMAPHORES } from './holders.js';
import type { HeldConfig, HeldSample } from './protocol.js';
import { heldHeadline, renderHeldTable } from './report.js';

const USAGE = `npm run bench:held -- [options]

  --quick             10 s per measurement instead of 30 s
  --duration S        seconds of steady state per measurement (requests, CPU,
                      heap); the event loop's delay is sampled after it, for
                      half as long or one TTL, whichever is longer
  --counts LIST       locks held, e.g. 1,100,1000,10000 (the default)
  --nodes LIST        node counts, e.g. 1,5 (the default)
  --library NAME      only this library (repeatable): ${HELD_LIBRARIES.join(', ')};
                      or semaphore permits (limit 2) instead of locks: ${HELD_SEMAPHORES.join(', ')}
  --ttl MS            every lock's TTL (default 10000)
  --out DIR           where the JSON and the chart go (default bench/results)
  --candidate DIR     also measure quorumlock built from DIR/src (e.g. main's
                      tree), as quorumlock-candidate (and, beside
                      quorumlock-semaphore, quorumlock-semaphore-candidate),
                      in the same rotation
  --profile DIR       write each child's CPU profile of its measured window there
                      (open in Chrome DevTools or summarize with bench/held/profileSummary.ts)
`;

/** A child that has not reported this long after its measurement should have ended is killed. */
const CHILD_SLACK_MS = 120_000;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--scenario' && arg !== 'held'),
    options: {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      counts: { type: 'string' },
      nodes: { type: 'string' },
      library: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'string' },
      candidate: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const list = (text: string | undefined, fallback: number[]) => (text === undefined ? fallback : text.split(',').map(Number));
  const durationMs = Number(values.duration ?? (values.quick ? 10 : 30)) * 1000;
  const counts = list(values.counts, [1, 100, 1000, 10_000]);
  const nodeCounts = list(values.nodes, [1, 5]);
  const libraries: string[] = values.library ?? [...HELD_LIBRARIES];
  const known: readonly string[] = [...HELD_LIBRARIES, ...HELD_SEMAPHORES];
  const unknown = libraries.find((library) => !known.includes(library));
  if (unknown !== undefined) throw new Error(`--library ${unknown}: expected one of ${known.join(', ')}`);
  if (values.candidate !== undefined) {
    if (libraries.includes('quorumlock')) libraries.push(CANDIDATE);
    if (libraries.includes('quorumlock-semaphore')) libraries.push(CANDIDATE_SEMAPHORE);
  }
  const ttlMs = Number(values.ttl ?? 10_000);
  // At least one TTL: every lock's renewal falls in it, and with it the turns they take.
  const delayWindowMs = Math.max(ttlMs, durationMs / 2);
  await removeStaleBuilds();
  const started = new Date();
  const samples: HeldSample[] = [];
  try {
    await buildLibrary();
    if (values.candidate !== undefined) await buildLibrary(values.candidate, 'candidate');
    const script = await buildBenchScript('held-child', join('bench', 'held', 'child.ts'));
    const pool = await openNodes([], Math.max(...nodeCounts));
    try {
      const runId = `qlheld:${randomBytes(4).toString('hex')}`;
      let turn = 0;
      const total = nodeCounts.length * counts.length * libraries.length;
      for (const nodes of nodeCounts) {
        for (const count of counts) {
          // A rotating order: no library always goes first (on a fresh machine) or last.
          const order = libraries.map((_, i) => libraries[(i + turn) % libraries.length] as string);
          turn++;
          for (const library of order) {
            const config: HeldConfig = {
              library,
              libraryUrl: library === CANDIDATE || library === CANDIDATE_SEMAPHORE ? libraryUrl('candidate') : libraryUrl(),
              urls: pool.urls.slice(0, nodes),
              count,
              ttlMs,
              // Steady state starts once every lock has been renewed: the acquires'
              // garbage is collected by then, and a library that batches
              // renewals has formed its batches.
              settleMs: ttlMs,
              durationMs,
              delayWindowMs,
              keyPrefix: `${runId}:${library}:${nodes}:${count}`,
              ...(values.profile === undefined ? {} : { profileDir: resolve(values.profile) }),
            };
            process.stderr.write(`[${samples.length + 1}/${total}] ${library} · ${nodes} node(s) · ${count} locks · ${durationMs / 1000} s ... `);
            const sample = await runChild(script, config, durationMs + delayWindowMs + CHILD_SLACK_MS);
            samples.push(sample);
            process.stderr.write(
              `${sample.reqsPerNodePerS.toFixed(1)} req/node/s, CPU ${sample.cpuPercent.toFixed(1)} % (main thread ${(100 * sample.cpuMainThreadShare).toFixed(0)} %), loop p99 ${sample.loopDelayP99Ms.toFixed(1)} ms, lost ${sample.lost}\n`,
            );
          }
        }
      }
    } finally {
      await pool.close();
    }
  } finally {
    await removeBuilds();
  }
  const finished = new Date();
  const meta = {
    startedAt: started.toISOString(),
    durationS: Math.round((finished.getTime() - started.getTime()) / 1000),
    command: ['npm run bench:held --', ...process.argv.slice(2)].join(' '),
    node: process.version,
    ttlMs,
    secondsPerMeasurement: durationMs / 1000,
  };
  const headline = heldHeadline(samples);
  process.stdout.write(`\n${renderHeldTable(samples)}\n${headline.join('\n')}\n`);
  const dir = resolve(values.out ?? join(ROOT, 'bench', 'results'));
  await mkdir(dir, { recursive: true });
  const stamp = `${meta.startedAt.replace(/[:.]/g, '-')}-held`;
  await writeFile(join(dir, `${stamp}.json`), `${JSON.stringify({ meta, headline, samples }, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  await writeFile(join(dir, `${stamp}.svg`), renderHeldChart(samples, meta.startedAt));
  process.stdout.write(`\nresults: ${join(dir, `${stamp}.json`)}\nchart:   ${join(dir, `${stamp}.svg`)}\n`);
  return 0;
}

function runChild(script: string, config: HeldConfig, limitMs: number): Promise<HeldSample> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid !== undefined) registerProcess({ pid });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4096)));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) unregisterProcess(pid);
      const line = stdout.trim().split('\n').pop();
      if (code === 0 && line) resolvePromise(JSON.parse(line) as HeldSample);
      else reject(new Error(`held child (${config.library}, ${config.count} locks) exited with ${code ?? signal}: ${stderr}`));
    });
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench:held failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
