/**
 * One process of the procs scenario: its own ioredis clients (one per node),
 * one locker of one contender, W waiters in it. It warms up on a key of its
 * own, says ready, warms up again with the other processes on a key they
 * share, waits for go (so every process starts together), runs the waiters,
 * reports, closes its clients and exits. On stop (the parent's
 * timeout) it reports what it has so far and exits without waiting for its
 * acquires in flight: some libraries cannot be interrupted.
 *
 * Bundled by procs/build.ts and run with plain node by procs/children.ts.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { openClients, type ClientGroup } from '../clients.js';
import { allContenders, contenderKey, type BenchLocker, type HeldLock } from '../contenders/index.js';
import type { Library } from '../library.js';
import { sharedNow } from '../scenarios/clock.js';
import { raceLimit } from './limit.js';
import { PROGRESS_MS, type FromWorker, type SectionRecord, type ToWorker, type WorkerConfig, type WorkerReport } from './protocol.js';

/** Uncontended cycles before ready: connections, script caches and the JIT are warm when go comes. */
const WARMUP_CYCLES = 20;
/**
 * The shared warm-up is one unmeasured round of the measured shape (each
 * waiter wants sharedWarmupKey `sections` times), ended by this limit
 * whoever did not get their sections (a peer too slow to finish on several
 * nodes). Without it the contended paths ran for the first time inside the
 * measured window: each process's first contention (for quorumlock a
 * subscriber connection per node, ~6.5 ms of CPU in a fresh process) and
 * the JIT's first runs of the wait-line and handoff code, in 8 processes at
 * once on 2 cores. A process pays that once in its life; a round of 512
 * sections lasts ~0.7 s, and it was 3-5% of it.
 */
const SHARED_WARMUP_LIMIT_MS = 3_000;
/**
 * Past the limit, how long the warm-up waits for acquires still out: the
 * Redlock-style peers take no signal and give up only at the end of a
 * slice of their retries (contenders/redlockStyle.ts, about a second).
 * Their requests would otherwise count in the measured window.
 */
const SHARED_WARMUP_GRACE_MS = 2_000;
/** Every waiter's acquire may listen on `signal` at once (several listeners each). */
function allowWaitersOn(signal: AbortSignal, waiters: number): void {
  setMaxListeners(waiters * 4 + 10, signal);
}

/** Pause after an unexpected failure, so a broken node is not hammered in a tight loop. */
const ERROR_PAUSE_MS = 5;

// The parent is gone (killed, or crashed): nobody will read a report.
process.on('disconnect', () => process.exit(2));

let session: Session | undefined;
let reported = false;

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'start':
      Session.open(message.config).then(
        (opened) => {
          session = opened;
          send({ type: 'ready' });
        },
        (error: unknown) => fail(error),
      );
      return;
    case 'warm':
      session?.warmTogether().then(
        () => send({ type: 'warmed' }),
        (error: unknown) => fail(error),
      );
      return;
    case 'ping':
      send({ type: 'pong', sentAt: message.sentAt, workerNow: sharedNow() });
      return;
    case 'go':
      session?.run().then(
        (report) => finish(report),
        (error: unknown) => fail(error),
      );
      return;
    case 'stop':
      if (session !== undefined) void finish(session.stop());
      else process.exit(0);
      return;
  }
});

class Session {
  private readonly stopSignal = new AbortController();
  private readonly sections: SectionRecord[] = [];
  private readonly wantingSince: number[];
  private goAt = Number.NaN;
  private requestsAtGo = 0;
  private giveUps = 0;
  private errors = 0;
  private progress: NodeJS.Timeout | undefined;

  private constructor(
    private readonly config: WorkerConfig,
    readonly group: ClientGroup,
    private readonly locker: BenchLocker,
  ) {
    this.wantingSince = new Array<number>(config.waiters).fill(Number.NaN);
    allowWaitersOn(this.stopSignal.signal, config.waiters);
  }

  static async open(config: WorkerConfig): Promise<Session> {
    const lib = (await import(config.libraryUrl)) as Library;
    const candidate =
      config.candidate === undefined ? undefined : { lib: (await import(config.candidate.url)) as Library, from: config.candidate.from };
    const contender = allContenders(lib, candidate).find((c) => contenderKey(c) === config.contender);
    if (contender === undefined) throw new Error(`unknown contender ${config.contender}`);
    const group = await openClients(config.urls, contender.client);
    const session = new Session(config, group, contender.create(group.clients));
    await session.warmUp();
    return session;
  }

  async run(): Promise<WorkerReport> {
    this.goAt = sharedNow();
    this.requestsAtGo = this.group.requests();
    this.progress = setInterval(() => void send({ type: 'progress', sections: this.sections.length }), PROGRESS_MS);
    await Promise.all(Array.from({ length: this.config.waiters }, (_, waiter) => this.waiter(waiter)));
    return this.report(true);
  }

  stop(): WorkerReport {
    this.stopSignal.abort();
    return this.report(false);
  }


  private async warmUp(): Promise<void> {
    const never = new AbortController().signal;
    for (let cycle = 0; cycle < WARMUP_CYCLES; cycle++) {
      const lock = await this.locker.acquire(this.config.warmupKey, this.config.ttlMs, never);
      await lock?.release();
    }
    await this.group.quiet();
  }

  /** The shared warm-up (ToWorker 'warm'): the round's waiters want sharedWarmupKey with every other process's, nothing recorded. */
  async warmTogether(): Promise<void> {
    const { waiters, sections, sharedWarmupKey, ttlMs, holdMs } = this.config;
    const signal = AbortSignal.timeout(SHARED_WARMUP_LIMIT_MS);
    allowWaitersOn(signal, waiters);
    const warmer = async (): Promise<void> => {
      for (let done = 0; done < sections && !signal.aborted; done++) {
        const lock = await this.locker.acquire(sharedWarmupKey, ttlMs, signal).catch(() => null);
        if (lock === null) return;
        await sleep(holdMs);
        await lock.release().catch(() => undefined);
      }
    };
    await raceLimit(Promise.all(Array.from({ length: waiters }, warmer)), SHARED_WARMUP_LIMIT_MS + SHARED_WARMUP_GRACE_MS);
    await this.group.quiet();
  }

  private async waiter(waiter: number): Promise<void> {
    const { sections, holdMs } = this.config;
    for (let done = 0; done < sections && !this.stopSignal.signal.aborted; done++) {
      const wantAt = sharedNow();
      this.wantingSince[waiter] = wantAt;
      const lock = await this.acquire();
      this.wantingSince[waiter] = Number.NaN;
      if (lock === null) return;
      const start = sharedNow();
      await sleep(holdMs);
      this.sections.push({ waiter, wantAt, start, end: sharedNow() });
      try {
        await lock.release();
      } catch {
        this.errors++;
      }
    }
  }

  /** The lock, asking again after give-ups and failures; null only once stopped. */
  private async acquire(): Promise<HeldLock | null> {
    const { signal } = this.stopSignal;
    while (!signal.aborted) {
      try {
        const lock = await this.locker.acquire(this.config.key, this.config.ttlMs, signal);
        if (lock !== null) return lock;
        if (!signal.aborted) this.giveUps++;
      } catch {
        this.errors++;
        await sleep(ERROR_PAUSE_MS);
      }
    }
    return null;
  }

  private report(finished: boolean): WorkerReport {
    clearInterval(this.progress);
    return {
      proc: this.config.proc,
      finished,
      goAt: this.goAt,
      endAt: sharedNow(),
      sections: [...this.sections],
      waitingSince: this.wantingSince.filter(Number.isFinite),
      requests: this.group.requests() - this.requestsAtGo,
      giveUps: this.giveUps,
      errors: this.errors,
    };
  }
}

function send(message: FromWorker): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, undefined, undefined, () => resolve());
  });
}

/**
 * Reports once, then lets the slowest nodes answer (their commands count in
 * the parent's INFO deltas) and exits: a library's leftover timers must not
 * keep the process alive.
 */
async function finish(report: WorkerReport): Promise<void> {
  if (reported) return;
  reported = true;
  await send({ type: 'report', report });
  if (report.finished) await session?.group.quiet();
  session?.group.close();
  process.exit(0);
}

function fail(error: unknown): void {
  process.stderr.write(`procs worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
