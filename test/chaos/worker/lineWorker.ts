/**
 * A wait-line worker process: a few ObservedRedlock lockers, each with several
 * waiters that acquire() one hot resource over and over, hold it briefly (now
 * and then long enough to be killed mid-hold) and release it. With more
 * waiters than the resource can serve, they spend their time in this
 * process's line and the nodes' wait lines, which is what the wait-line
 * scenario kills and stops them in.
 *
 * Every record is written to this worker's journal file the moment it
 * exists (the parent may kill -9 this process at any time, and a killed
 * worker sends no history), and sent to the parent for its live view:
 * rounds, releases going out, handovers, and each acquire() call's want,
 * from the call to its outcome. Started by run/lineScenario.ts as
 *   node --import tsx --import ./scripts/register-lua.mjs test/chaos/worker/lineWorker.ts
 * then 'prepare' (connect, answer 'ready'), 'ping's for the time base, 'go'
 * (the waiters start), 'stop' (they stop, 'line-done', the process exits).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError } from '../../../src/index.js';
import { defaultClientOptions } from '../../support/harness.js';
import { type HistorySink, ObservedRedlock } from '../history/ObservedRedlock.js';
import { fromMonotonic, sharedNow } from '../history/timeBase.js';
import type { HandoverRecord, OpRecord, ReleaseIntent, WantEnd } from '../history/types.js';
import { Rng } from '../run/rng.js';
import { sleep } from '../run/sleep.js';
import { finish as finishWorker, send, unhandled } from './workerProcess.js';
import type { FromWorker, LineWorkerConfig, ToWorker } from './protocol.js';

/** The journal's file descriptor, once 'prepare' named it. */
let journal: number | undefined;

/**
 * A record goes to the journal first, synchronously: once the call it
 * precedes has begun (a release request sent, a lock handed to its caller),
 * a kill -9 can no longer lose it, as it could an IPC message still queued
 * in this process. The IPC copy keeps the parent's live view (who holds,
 * who waits) for its fault injectors.
 */
function record(message: FromWorker): void {
  if (journal !== undefined) writeSync(journal, `${JSON.stringify(message)}\n`);
  send(message);
}

const streamed: HistorySink = {
  op: (op: OpRecord) => record({ type: 'op', record: op }),
  handover: (handover: HandoverRecord) => record({ type: 'handover', record: handover }),
  releasing: (intent: ReleaseIntent) => record({ type: 'releasing', record: intent }),
};

const EXPECTED_GIVE_UP: ReadonlySet<string> = new Set([
  ErrorCode.LOCK_HELD,
  ErrorCode.QUORUM_UNREACHABLE,
  ErrorCode.VALIDITY_EXHAUSTED,
  ErrorCode.ABORTED,
]);

interface Prepared {
  readonly config: LineWorkerConfig;
  readonly lockers: readonly ObservedRedlock[];
  readonly clients: readonly Redis[];
}

let preparing: Promise<Prepared> | undefined;
let running: Promise<void> | undefined;
const stop = new AbortController();

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'prepare':
      preparing ??= prepare(message.config);
      preparing.then(() => send({ type: 'ready' }), fail);
      return;
    case 'go':
      running ??= (preparing ?? Promise.reject(new Error("'go' before 'prepare'"))).then(run).catch(fail);
      return;
    case 'ping':
      send({ type: 'pong', sentAt: message.sentAt, workerNow: sharedNow() });
      return;
    case 'stop':
      stop.abort();
      // A spare that never ran has nothing to report but must still close its connections.
      running ??= (preparing ?? Promise.resolve(undefined)).then((prepared) => finish(prepared, undefined)).catch(fail);
      return;
    default:
      return;
  }
});

function fail(error: unknown): void {
  process.stderr.write(`line worker failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}

async function prepare(config: LineWorkerConfig): Promise<Prepared> {
  journal = openSync(config.journal, 'a');
  const clients: Redis[] = [];
  const lockers = config.lockers.map((endpoints, i) => {
    const own = endpoints.map(({ host, port }) => {
      // Nodes are killed and paused: a short disconnect timeout keeps the stop quick.
      const client = new Redis({ ...defaultClientOptions, host, port, disconnectTimeout: 200 });
      client.on('error', () => undefined);
      return client;
    });
    clients.push(...own);
    const nodeNames = new Map(endpoints.map((e) => [`${e.host}:${e.port}`, e.nodeName]));
    const options = { nodeTimeoutMs: config.nodeTimeoutMs, acquireTimeoutMs: config.acquireTimeoutMs, retry: config.retry, fencing: config.fencing };
    return new ObservedRedlock(own, options, { client: `${config.name}.c${i}`, sink: streamed, nodeNames });
  });
  await Promise.all(clients.map((c) => (c.status === 'ready' ? undefined : new Promise((resolve) => c.once('ready', resolve)))));
  return { config, lockers, clients };
}

interface Counts {
  acquired: number;
  gaveUp: Record<string, number>;
  unexpected: string[];
}

async function run(prepared: Prepared): Promise<void> {
  const { config, lockers } = prepared;
  const rng = new Rng(config.seed);
  const counts: Counts = { acquired: 0, gaveUp: {}, unexpected: [] };
  const stopWatching = watchStalls();
  await Promise.all(
    lockers.flatMap((locker, l) =>
      Array.from({ length: config.waitersPerLocker }, (_, w) => waiter(locker, `${config.name}.c${l}`, `${config.name}.c${l}.w${w}`, config, rng.fork(), counts)),
    ),
  );
  stopWatching();
  await finish(prepared, counts);
}

/** A tick this late means the process could not run (descheduled on a busy machine, or blocked). */
const STALL_TICK_MS = 10;
const STALL_MS = 50;

/**
 * Journals the times this process could not run: on a busy machine a process
 * is descheduled for hundreds of ms now and then, and its waiters are as
 * unable to act then as when SIGSTOPped. The liveness figure does not count
 * them as live waiters during a stall (nor as lost: they come back).
 */
function watchStalls(): () => void {
  let last = sharedNow();
  const timer = setInterval(() => {
    const now = sharedNow();
    if (now - last > STALL_MS) record({ type: 'stall', from: last + STALL_TICK_MS, to: now });
    last = now;
  }, STALL_TICK_MS);
  return () => clearInterval(timer);
}

async function waiter(locker: ObservedRedlock, client: string, label: string, config: LineWorkerConfig, rng: Rng, counts: Counts): Promise<void> {
  let seq = 0;
  while (!stop.signal.aborted) {
    const id = `${label}~${++seq}`;
    const acquireTimeoutMs = rng.chance(config.impatientChance) ? config.impatientTimeoutMs : config.acquireTimeoutMs;
    record({ type: 'want', id, client, resources: [config.resource], at: sharedNow() });
    let end: WantEnd = 'gave-up';
    try {
      const lock = await locker.acquire(config.resource, config.ttlMs, { acquireTimeoutMs, signal: stop.signal });
      end = 'acquired';
      const resources = [config.resource];
      record({ type: 'hold', id, client, value: lock.value, resources, at: sharedNow(), validUntil: fromMonotonic(lock.validUntil) });
      record({ type: 'wanted', id, at: sharedNow(), end });
      counts.acquired += 1;
      const holdMs = rng.chance(config.longHoldChance) ? rng.int(config.longHoldMs[0], config.longHoldMs[1]) : rng.int(0, config.shortHoldMs);
      // Not cut short by the stop: a hold ends with its release, as a caller's would.
      await sleep(holdMs);
      record({ type: 'unhold', id, at: sharedNow(), validUntil: fromMonotonic(lock.validUntil) });
      await lock.release();
    } catch (error) {
      if (end === 'acquired') throw error;
      record({ type: 'wanted', id, at: sharedNow(), end });
      const code = isQuorumLockError(error) ? error.code : undefined;
      if (code !== undefined && EXPECTED_GIVE_UP.has(code)) counts.gaveUp[code] = (counts.gaveUp[code] ?? 0) + 1;
      else counts.unexpected.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  }
}

async function finish(prepared: Prepared | undefined, counts: Counts | undefined): Promise<void> {
  for (const client of prepared?.clients ?? []) client.disconnect();
  if (journal !== undefined) closeSync(journal);
  journal = undefined;
  // The library's idle wake-up connections close 500 ms after their last waiter.
  await sleep(600);
  await finishWorker({ type: 'line-done', stats: counts ?? { acquired: 0, gaveUp: {}, unexpected: [] }, unhandled });
}
