/** `npm run bench` (= `tsx bench/main.ts`): parse options, build quorumlock, get nodes, run the plan, report. */
import { cpus } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseCli, USAGE, type CliOptions } from './cli.js';
import { openAdminClient } from './clients.js';
import { allContenders } from './contenders/index.js';
import { buildLibrary, libraryUrl, removeBuilds, removeStaleBuilds } from './library.js';
import { openNodes } from './nodes.js';
import { makePlan } from './plan.js';
import { runPermits } from './permits/run.js';
import { buildBenchScript, buildWorker } from './procs/build.js';
import { runProcs } from './procs/run.js';
import { writeResults } from './report/files.js';
import { headline, renderHeadline } from './report/headline.js';
import { permitsHeadline, renderPermitTables } from './report/permits.js';
import { renderTables } from './report/table.js';
import type { RunResult } from './results.js';
import { runPlan } from './runner.js';
import { redisVersion } from './serverStats.js';

async function main(): Promise<number> {
  const cli = parseCli(process.argv.slice(2));
  if (cli.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  await removeStaleBuilds();
  try {
    return await measureAndReport(cli);
  } finally {
    await removeBuilds();
  }
}

async function measureAndReport(cli: CliOptions): Promise<number> {
  const lib = await buildLibrary();
  const candidate = cli.candidate === undefined ? undefined : { lib: await buildLibrary(cli.candidate, 'candidate'), from: cli.candidate };
  const plan = makePlan(cli, allContenders(lib, candidate));
  const procsWorker = plan.procs === undefined ? undefined : await buildWorker();
  const permitsWorker = plan.permits === undefined ? undefined : await buildBenchScript('semaphore-worker', 'bench/semaphore/worker.ts');
  const started = new Date();
  const pool = await openNodes(cli.urls, plan.localNodes);
  try {
    process.stderr.write(
      `quorumlock bench (${plan.mode}): ${pool.local ? `${plan.localNodes} local redis-server process(es)` : `${pool.urls.length} given node(s)`}, ` +
        `node counts ${plan.nodeCounts.join(', ')}, ${plan.contenders.length} contenders, ` +
        `${plan.scenarios.length + (plan.procs === undefined ? 0 : 1) + (plan.permits === undefined ? 0 : 1)} scenarios\n`,
    );
    const version = await versionOf(pool.urls[0]);
    const runId = `qlbench:${randomBytes(4).toString('hex')}`;
    const topologies = await runPlan(plan, pool.urls, runId);
    if (plan.procs !== undefined && procsWorker !== undefined) {
      const procs = await runProcs(plan.procs, plan.ttlMs, pool.urls, runId, {
        script: procsWorker,
        libraryUrl: libraryUrl(),
        candidate: cli.candidate === undefined ? undefined : { url: libraryUrl('candidate'), from: cli.candidate },
      });
      for (const topology of topologies) {
        const result = procs.get(topology.nodes);
        if (result !== undefined) topology.scenarios.push(result);
      }
    }
    const permits =
      plan.permits === undefined || permitsWorker === undefined
        ? undefined
        : await runPermits(plan.permits, pool.urls, runId, { script: permitsWorker, libraryUrl: libraryUrl() }, (text) =>
            process.stderr.write(`  ${text}\n`),
          );
    const finished = new Date();
    const cpu = cpus();
    const run: RunResult = {
      meta: {
        startedAt: started.toISOString(),
        finishedAt: finished.toISOString(),
        durationS: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
        mode: plan.mode,
        command: ['npm run bench --', ...process.argv.slice(2)].join(' '),
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        cpus: cpu.length,
        cpuModel: cpu[0]?.model.trim() ?? 'unknown',
        redisVersion: version,
        nodesSource: pool.local ? 'local' : 'user',
        ttlMs: plan.ttlMs,
      },
      topologies,
      ...(permits === undefined ? {} : { permits }),
    };
    const lines = headline(run);
    const files = await writeResults(run, lines, cli.outDir);
    const permitsTables = permits === undefined ? '' : `${renderPermitTables(permits)}\n`;
    const permitsLines = permits === undefined ? [] : permitsHeadline(permits);
    process.stdout.write(`\n${renderTables(run)}\n${permitsTables}${[renderHeadline(lines), ...permitsLines].join('\n')}\n\n`);
    process.stdout.write(`results: ${files.json}\nchart:   ${files.svg}\n`);
    return 0;
  } finally {
    await pool.close();
  }
}

async function versionOf(url: string | undefined): Promise<string> {
  if (url === undefined) return 'unknown';
  const admin = await openAdminClient(url);
  try {
    return await redisVersion(admin);
  } finally {
    admin.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
