/**
 * One process of `npm run bench:systems` and of the recipes' correctness
 * tests: it opens the system named by the SystemSpec in argv (JSON), prints
 * "ready", then runs one JSON command per stdin line and answers each with
 * one JSON line. Stdin closing (the bench is gone) ends it.
 *
 * - hot: `waiters` holders on one lock for `phaseMs`, each hold `holdMs`:
 *   sections per waiter and every wait;
 * - hold: takes the lock, answers, keeps it until killed;
 * - take: takes the lock, answers, releases it;
 * - exclusive: `rounds` times takes the lock and appends "enter <pid>" and,
 *   `holdMs` later, "exit <pid>" to `file` (the tests read the file back).
 */
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSystem } from './locks/open.js';
import type { Holder, SystemSpec } from './locks/types.js';

export type WorkerCommand =
  | { readonly op: 'hot'; readonly name: string; readonly waiters: number; readonly phaseMs: number; readonly holdMs: number }
  | { readonly op: 'hold'; readonly name: string }
  | { readonly op: 'take'; readonly name: string }
  | { readonly op: 'exclusive'; readonly name: string; readonly rounds: number; readonly holdMs: number; readonly file: string };

export interface HotReport {
  readonly sections: readonly number[];
  readonly waits: readonly number[];
  readonly errors: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as SystemSpec;
const system = await openSystem(spec);
const first = await system.holder();
await (await first.acquire(`qlbench-warm-${process.pid}`)).release();
process.stdout.write('ready\n');

const answer = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
/** The hot rounds' holders, kept from round to round: a Postgres connection or etcd lease each. */
const hotHolders: Holder[] = [];

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as WorkerCommand;
  if (command.op === 'hot') {
    while (hotHolders.length < command.waiters) hotHolders.push(await system.holder());
    const holders = hotHolders.slice(0, command.waiters);
    const sections = holders.map(() => 0);
    const waits: number[] = [];
    let errors = 0;
    const end = performance.now() + command.phaseMs;
    await Promise.all(
      holders.map(async (holder, index) => {
        while (performance.now() < end) {
          const asked = performance.now();
          try {
            const held = await holder.acquire(command.name);
            waits.push(performance.now() - asked);
            await sleep(command.holdMs);
            await held.release();
            sections[index]!++;
          } catch {
            errors++;
          }
        }
      }),
    );
    answer({ sections, waits, errors } satisfies HotReport);
  } else if (command.op === 'hold') {
    await first.acquire(command.name);
    answer({ held: true });
  } else if (command.op === 'take') {
    const held = await first.acquire(command.name);
    answer({ taken: true });
    await held.release();
  } else {
    for (let round = 0; round < command.rounds; round++) {
      const held = await first.acquire(command.name);
      appendFileSync(command.file, `enter ${process.pid}\n`);
      await sleep(command.holdMs);
      appendFileSync(command.file, `exit ${process.pid}\n`);
      await held.release();
    }
    answer({ done: command.rounds });
  }
}
await system.close();
process.exit(0);
