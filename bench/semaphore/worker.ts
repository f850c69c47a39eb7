/**
 * One process of `npm run bench:semaphore`'s across-process case: its own
 * ioredis clients, one contender, `waiters` waiters in it. Config comes as
 * JSON in argv; it warms up, prints "ready", then for each "go <key>" line on
 * stdin runs its waiters on that key for `phaseMs` (1 ms holds) and prints one
 * JSON line: critical sections, each acquire's wait in ms, and the requests
 * its clients sent. "exit" (or
 * stdin closing: the bench is gone) ends it.
 *
 * Bundled by procs/build.ts and run with plain node.
 */
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { openClients } from '../clients.js';
import type { Library } from '../library.js';
import { now } from '../scenarios/clock.js';
import { cycleOf, type Kind } from './cycles.js';

export interface SemaphoreWorkerConfig {
  readonly libraryUrl: string;
  readonly urls: readonly string[];
  readonly kind: Kind;
  readonly waiters: number;
  readonly phaseMs: number;
  readonly holdMs: number;
}

export interface SemaphoreWorkerReport {
  readonly sections: number;
  readonly waits: readonly number[];
  /** Requests this process's clients sent during the phase (ClientGroup.requests). */
  readonly requests: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as SemaphoreWorkerConfig;
const library = (await import(config.libraryUrl)) as Library;
const group = await openClients(config.urls);
const cycle = cycleOf(config.kind, library, group.clients);
for (let i = 0; i < 5; i++) await (await cycle(`qlbench-semw:${process.pid}`))();
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [command, key = ''] = line.split(' ');
  if (command !== 'go') break;
  const end = now() + config.phaseMs;
  const waits: number[] = [];
  let sections = 0;
  const sentBefore = group.requests();
  await Promise.all(
    Array.from({ length: config.waiters }, async () => {
      while (now() < end) {
        const asked = now();
        const release = await cycle(key);
        waits.push(now() - asked);
        await sleep(config.holdMs);
        await release();
        sections++;
      }
    }),
  );
  await group.quiet();
  const report: SemaphoreWorkerReport = { sections, waits, requests: group.requests() - sentBefore };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
group.close();
process.exit(0);
