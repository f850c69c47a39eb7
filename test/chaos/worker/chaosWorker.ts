/**
 * A chaos worker process: runs a few ObservedRedlock lockers against the
 * proxies it is given, with the same workload as the in-process scenarios,
 * until the parent says stop; then sends its history over IPC and exits by
 * itself (nothing left open). Started by run/childWorkers.ts as
 *   node --import tsx --import ./scripts/register-lua.mjs test/chaos/worker/chaosWorker.ts
 * (tsx runs the TypeScript; register-lua loads the library's .lua as text).
 * Records use the shared time base (history/timeBase.ts).
 */
import { Redis } from 'ioredis';
import { defaultClientOptions } from '../../support/harness.js';
import { FaultLog } from '../history/FaultLog.js';
import { HistoryBuffer, ObservedRedlock } from '../history/ObservedRedlock.js';
import { sharedNow } from '../history/timeBase.js';
import { Rng } from '../run/rng.js';
import { grantsIn, redlockOptions } from '../run/scenario.js';
import { mergeStats, runClient } from '../run/workload.js';
import { finish, send, unhandled } from './workerProcess.js';
import type { FromWorker, ToWorker, WorkerConfig } from './protocol.js';

let started = false;
const stop = new AbortController();

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'start':
      if (!started) {
        started = true;
        void run(message.config).catch((error: unknown) => {
          process.stderr.write(`chaos worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
          process.exit(1);
        });
      }
      return;
    case 'ping':
      send({ type: 'pong', sentAt: message.sentAt, workerNow: sharedNow() });
      return;
    case 'stop':
      stop.abort();
      return;
  }
});

async function run(config: WorkerConfig): Promise<void> {
  const rng = new Rng(config.seed);
  const buffer = new HistoryBuffer();
  const faults = new FaultLog();
  const clients: Redis[] = [];
  const lockers = config.lockers.map((endpoints, i) => {
    const own = endpoints.map(({ host, port }) => {
      const client = new Redis({ ...defaultClientOptions, host, port });
      client.on('error', () => undefined);
      return client;
    });
    clients.push(...own);
    const nodeNames = new Map(endpoints.map((e) => [`${e.host}:${e.port}`, e.nodeName]));
    return new ObservedRedlock(own, redlockOptions(config.locker), { client: `${config.name}.c${i}`, sink: buffer, nodeNames });
  });
  await Promise.all(clients.map((c) => (c.status === 'ready' ? undefined : new Promise((resolve) => c.once('ready', resolve)))));
  const restoreClock = config.wallClockJumps ? jumpWallClock(rng.fork(), faults, config.name) : undefined;
  const progress = setInterval(() => send({ type: 'progress', acquisitions: grantsIn(buffer.ops) }), 1_000);
  send({ type: 'ready' });

  const stats = mergeStats(await Promise.all(lockers.map((locker) => runClient(locker, config.workload, rng.fork(), stop.signal))));
  clearInterval(progress);
  restoreClock?.();
  for (const client of clients) client.disconnect();
  // The library's idle wake-up connections close 500 ms after their last waiter.
  await new Promise((resolve) => setTimeout(resolve, 600));
  await finish({ type: 'history', ops: buffer.ops, handovers: buffer.handovers, faults: faults.records(), stats, unhandled });
}

/**
 * Date.now() jumps by up to an hour either way every 100 ms. The library
 * counts time on performance.now() only (rule 1), so nothing may change;
 * the history's time base is not affected (performance.timeOrigin is fixed).
 */
function jumpWallClock(rng: Rng, faults: FaultLog, target: string): () => void {
  const realNow = Date.now.bind(Date);
  let offsetMs = 0;
  Date.now = () => realNow() + offsetMs;
  const timer = setInterval(() => {
    offsetMs = rng.pick([-3_600_000, -60_000, -1_000, 0, 1_000, 60_000, 3_600_000]);
    faults.instant('wall clock jump', target, `Date.now() ${offsetMs >= 0 ? '+' : ''}${offsetMs} ms`);
  }, 100);
  return () => {
    clearInterval(timer);
    Date.now = realNow;
  };
}
