/**
 * One measurement of one contender in the procs scenario: start its P
 * children, wait until all are warm, find their time bases, say go to all
 * at once, and collect their reports, or stop them (procs/pace.ts says
 * when). Commands come from INFO commandstats around the run. The children
 * are gone when this returns or throws.
 */
import type { Redis } from 'ioredis';
import { difference, snapshot, totalCalls, type CommandStats } from '../serverStats.js';
import type { ProcsShape } from '../scenarios/procs.js';
import { analyse, type ProcsAnalysis } from './analysis.js';
import { WorkerChild, type TimeBase } from './children.js';
import { raceLimit, withLimit } from './limit.js';
import { watchPace } from './pace.js';
import type { WorkerConfig, WorkerReport } from './protocol.js';

/** Children start node, load the libraries and warm up: seconds on a busy 2-core machine. */
const START_LIMIT_MS = 60_000;
/** The shared warm-up ends in the children after SHARED_WARMUP_LIMIT_MS (worker.ts); this is the parent's limit on top. */
const WARM_LIMIT_MS = 30_000;
/** After stop, how long a child may take to send what it has. */
const STOP_GRACE_MS = 3_000;
/** How long a child may take to let its last replies arrive and exit. */
const EXIT_GRACE_MS = 3_000;
/**
 * A handoff between processes takes at least a trip to Redis and one back
 * (the release, then the next holder's acquire reply), about 0.1 ms on
 * loopback and usually more: time bases known much less precisely than that
 * could show a close handoff as an overlap, or hide a short overlap.
 */
const UNCERTAINTY_NOTE_MS = 0.25;

export interface ProcsRequest {
  /** The bundled worker (procs/build.ts). */
  readonly script: string;
  readonly shape: ProcsShape;
  /** `library:variant`. */
  readonly contender: string;
  readonly libraryUrl: string;
  readonly candidate: WorkerConfig['candidate'];
  readonly urls: readonly string[];
  readonly admins: readonly Redis[];
  /** Unique per contender, topology and round. */
  readonly keyPrefix: string;
  readonly ttlMs: number;
  readonly timeoutMs: number;
}

export interface Unfinished {
  /** A few words for the table, e.g. `did not finish in 20 s`. */
  readonly status: string;
  /** The same with how much was done, for the notes. */
  readonly detail: string;
}

export interface ProcsMeasurement {
  /** Undefined when no child reported anything. */
  readonly analysis: ProcsAnalysis | undefined;
  readonly commands: CommandStats;
  /** Why not every section was done (stopped, or failed processes); undefined when all were. */
  readonly unfinished: Unfinished | undefined;
  readonly notes: readonly string[];
  /** How far the children's time bases were from ours before correction, and how well that is known. */
  readonly timeBase: { readonly largestOffsetMs: number; readonly uncertaintyMs: number };
}

type Outcome = { readonly report: WorkerReport } | { readonly error: string };

export async function measureProcs(request: ProcsRequest): Promise<ProcsMeasurement> {
  const { shape } = request;
  const wanted = shape.processes * shape.waiters * shape.sections;
  const children = Array.from({ length: shape.processes }, (_, proc) => new WorkerChild(request.script, `${request.contender} process ${proc}`));
  try {
    const bases = await startAll(children, request);
    const before = await snapshot(request.admins);
    const reports = children.map((child) => settle(child.report()));
    for (const child of children) child.go();
    const watched = await watchPace(
      Promise.all(reports),
      () => children.reduce((sum, child) => sum + child.sections, 0),
      wanted,
      request.timeoutMs,
    );
    const outcomes = 'done' in watched ? watched.done : await stopAll(children, reports);
    await Promise.all(children.map((child) => child.exit(EXIT_GRACE_MS)));
    for (const child of children) child.kill();
    const commands = difference(before, await snapshot(request.admins));

    const notes: string[] = [];
    const uncertaintyMs = Math.max(...bases.map((base) => base.uncertaintyMs));
    if (uncertaintyMs > UNCERTAINTY_NOTE_MS) {
      notes.push(`the processes' time bases are known to ±${uncertaintyMs.toFixed(3)} ms only: overlaps may be miscounted`);
    }
    const got: WorkerReport[] = [];
    outcomes.forEach((outcome, proc) => {
      if ('report' in outcome) got.push(onOurTimeBase(outcome.report, bases[proc]?.offsetMs ?? 0));
      else notes.push(`process ${proc}: ${outcome.error}`);
    });
    const analysis =
      got.length === 0
        ? undefined
        : analyse(shape, got, {
            requests: got.reduce((sum, report) => sum + report.requests, 0),
            commands: totalCalls(commands),
            nodes: request.urls.length,
          });
    const done = `${analysis?.sections ?? 0} of ${wanted} critical sections done`;
    const failed = children.length - got.length;
    const status = 'stopped' in watched ? watched.stopped.status : failed > 0 ? `${failed} of ${children.length} processes failed` : undefined;
    return {
      analysis,
      commands,
      unfinished: status === undefined ? undefined : { status, detail: `${status}${'stopped' in watched ? watched.stopped.why : ''}: ${done}` },
      notes,
      timeBase: { largestOffsetMs: Math.max(...bases.map((base) => Math.abs(base.offsetMs))), uncertaintyMs },
    };
  } finally {
    for (const child of children) child.kill();
  }
}

/** Starts and warms up every child (alone, then all together), then finds each one's time base (one at a time: pings in parallel would wait on each other). */
async function startAll(children: readonly WorkerChild[], request: ProcsRequest): Promise<TimeBase[]> {
  await withLimit(
    Promise.all(children.map((child, proc) => child.start(configFor(request, proc)))),
    START_LIMIT_MS,
    `${request.contender}: its ${children.length} processes were not ready within ${START_LIMIT_MS / 1000} s`,
  );
  await withLimit(
    Promise.all(children.map((child) => child.warm())),
    WARM_LIMIT_MS,
    `${request.contender}: its ${children.length} processes did not finish the shared warm-up within ${WARM_LIMIT_MS / 1000} s`,
  );
  const bases: TimeBase[] = [];
  for (const child of children) bases.push(await child.timeBase());
  return bases;
}

/** What each child has so far; a child that sends nothing in time counts as failed. */
function stopAll(children: readonly WorkerChild[], reports: readonly Promise<Outcome>[]): Promise<Outcome[]> {
  for (const child of children) child.stop();
  return Promise.all(
    reports.map(async (report) => (await raceLimit(report, STOP_GRACE_MS)) ?? { error: `sent nothing within ${STOP_GRACE_MS} ms of stop` }),
  );
}

function configFor(request: ProcsRequest, proc: number): WorkerConfig {
  return {
    proc,
    contender: request.contender,
    libraryUrl: request.libraryUrl,
    candidate: request.candidate,
    urls: request.urls,
    key: `${request.keyPrefix}:k`,
    warmupKey: `${request.keyPrefix}:warmup:p${proc}`,
    sharedWarmupKey: `${request.keyPrefix}:warmup:shared`,
    ttlMs: request.ttlMs,
    waiters: request.shape.waiters,
    sections: request.shape.sections,
    holdMs: request.shape.holdMs,
  };
}

/** The report with the child's readings moved onto the parent's time base. */
function onOurTimeBase(report: WorkerReport, offsetMs: number): WorkerReport {
  const shift = (at: number): number => at - offsetMs;
  return {
    ...report,
    goAt: shift(report.goAt),
    endAt: shift(report.endAt),
    sections: report.sections.map((section) => ({
      ...section,
      wantAt: shift(section.wantAt),
      start: shift(section.start),
      end: shift(section.end),
    })),
    waitingSince: report.waitingSince.map(shift),
  };
}

function settle(report: Promise<WorkerReport>): Promise<Outcome> {
  return report.then(
    (value) => ({ report: value }),
    (error: unknown) => ({ error: (error instanceof Error ? error.message : String(error)).split('\n').slice(0, 3).join(' ') }),
  );
}
