/**
 * One process of the across-process cases (`npm run bench:semaphore`, and
 * `npm run bench`'s permits scenario): its own ioredis clients per contender
 * kind, `waiters` waiters. Config comes as JSON in argv; it warms each kind
 * up and prints "ready". Then, one line each on stdin:
 * - "ping" prints "pong <its shared clock>" (the bench finds its time base);
 * - "go <kind index> <key> <writers>" runs that kind's waiters on the key for
 *   `phaseMs` (the first `writers` ask for the write side; holds of `holdMs`)
 *   and prints one JSON line (SemaphoreWorkerReport);
 * - "exit" (or stdin closing: the bench is gone) ends it.
 *
 * Bundled by procs/build.ts and run with plain node.
 */
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClientGroup, openClients } from '../clients.js';
import type { Library } from '../library.js';
import { now, sharedNow } from '../scenarios/clock.js';
import { type Cycle, cycleOf, type Kind } from './cycles.js';

export interface SemaphoreWorkerConfig {
  readonly libraryUrl: string;
  readonly urls: readonly string[];
  /** The contenders this process runs, each with clients of its own. */
  readonly kinds: readonly Kind[];
  readonly waiters: number;
  readonly phaseMs: number;
  readonly holdMs: number;
}

/** One critical section on the shared clock (scenarios/clock.ts sharedNow): [acquired, hold ended and release called, 1 for a writer]. */
export type HoldRecord = readonly [start: number, end: number, writer: 0 | 1];

export interface SemaphoreWorkerReport {
  readonly sections: number;
  /** Each acquire's wait in ms (readers' and the semaphore's; writers' are in writerWaits). */
  readonly waits: readonly number[];
  readonly writerWaits: readonly number[];
  /** Requests this process's clients of the kind sent during the phase (ClientGroup.requests). */
  readonly requests: number;
  readonly holds: readonly HoldRecord[];
}

const config = JSON.parse(process.argv[2] ?? '{}') as SemaphoreWorkerConfig;
const library = (await import(config.libraryUrl)) as Library;
const contenders: { group: ClientGroup; cycle: Cycle }[] = [];
for (const kind of config.kinds) {
  const group = await openClients(config.urls);
  const cycle = cycleOf(kind, library, group.clients);
  for (let i = 0; i < 5; i++) await (await cycle(`qlbench-semw:${process.pid}:${kind}`, i % 2 === 1))();
  contenders.push({ group, cycle });
}
process.stdout.write('ready\n');

async function phase(contender: { group: ClientGroup; cycle: Cycle }, key: string, writers: number): Promise<SemaphoreWorkerReport> {
  const end = now() + config.phaseMs;
  const waits: number[] = [];
  const writerWaits: number[] = [];
  const holds: HoldRecord[] = [];
  const sentBefore = contender.group.requests();
  await Promise.all(
    Array.from({ length: config.waiters }, async (_, waiter) => {
      const writer = waiter < writers;
      while (now() < end) {
        const asked = now();
        const release = await contender.cycle(key, writer);
        const start = sharedNow();
        (writer ? writerWaits : waits).push(now() - asked);
        await sleep(config.holdMs);
        holds.push([start, sharedNow(), writer ? 1 : 0]);
        await release();
      }
    }),
  );
  await contender.group.quiet();
  return { sections: holds.length, waits, writerWaits, requests: contender.group.requests() - sentBefore, holds };
}

for await (const line of createInterface({ input: process.stdin })) {
  const [command, index = '', key = '', writers = '0'] = line.split(' ');
  if (command === 'ping') {
    process.stdout.write(`pong ${sharedNow()}\n`);
    continue;
  }
  if (command !== 'go') break;
  const contender = contenders[Number(index)];
  if (contender === undefined) throw new Error(`go ${index}: this worker runs ${contenders.length} kinds`);
  process.stdout.write(`${JSON.stringify(await phase(contender, key, Number(writers)))}\n`);
}
for (const { group } of contenders) group.close();
process.exit(0);
