/**
 * The read-write lock's rule on one node, as its scripts keep it: a live
 * writer's key and a live reader's lease never stand together. Every grant
 * of the read-write lock rests on it (a writer's quorum and a reader's meet
 * in a node that would hold both), including a reader handed a reservation at
 * a writer's release (rwWake.lua's grant_readers) and its claim of the lease
 * (rwRead.lua from the line), and a writer taking over a claim by its place
 * in line (rwWrite.lua). Random sequences of the scripts' calls, from the
 * line or not, by a few readers and writers, with time advancing, run on the
 * in-memory node (the project's .lua files in a Lua VM; the model check in
 * luaNode.test.ts holds that node to redis-server), checked after each step.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { lineAndLeaseFor } from '../../src/scripts/lineKeys.js';
import type { LuaScript } from '../../src/scripts/LuaScript.js';
import { rwReadExtendScript, rwReadReleaseScript, rwReadScript, rwWriteReleaseScript, rwWriteScript } from '../../src/scripts/readWrite.js';
import { InMemoryNode } from '../../src/testing/InMemoryNode.js';
import { FakeClock } from '../support/FakeClock.js';
import { checkProperty, report, timeoutFor } from './fcConfig.js';

await InMemoryNode.ready();

const RUNS = 300;
const START_MS = 1_700_000_000_000;
const [WRITER, READERS, CLAIM] = readWriteKeys('r');
const READERS_LINE = lineAndLeaseFor(READERS);
const WRITERS_LINE = lineAndLeaseFor(WRITER);
const RELEASE_KEYS = [WRITER, READERS, CLAIM, ...WRITERS_LINE, ...READERS_LINE];

type Call = { readonly name: string; readonly script: LuaScript; readonly keys: readonly string[]; readonly args: readonly (string | number)[] };
type Step = Call | { readonly name: 'advance'; readonly ms: number };

/** How a step reads in a counterexample: its name and arguments, not the script's source. */
const shown = (step: Step): string => ('ms' in step ? `advance ${step.ms}` : `${step.name} ${step.args.join(' ')}`);
const named = (step: Step): Step => Object.assign(step, { toString: () => shown(step) });

const valueArb = fc.constantFrom('a', 'b', 'c', 'd');
const ttlArb = fc.constantFrom(50, 300, 1000);
/** Each waiter's ticket, the same on every node: its place in a line. */
const ticketOf = (value: string) => 1 + 'abcd'.indexOf(value);
const LEASE_MS = 2000;

const stepArb: fc.Arbitrary<Step> = fc.oneof<fc.Arbitrary<Step>[]>(
  fc.tuple(valueArb, ttlArb, fc.boolean()).map(([v, t, line]): Step =>
    line
      ? { name: 'rwRead(line)', script: rwReadScript, keys: [WRITER, READERS, CLAIM, ...READERS_LINE], args: [v, t, 'line', LEASE_MS, ticketOf(v)] }
      : { name: 'rwRead', script: rwReadScript, keys: [WRITER, READERS, CLAIM], args: [v, t] },
  ),
  fc.tuple(valueArb, ttlArb, fc.constantFrom(100, 1000), fc.boolean()).map(([v, t, claim, line]): Step =>
    line
      ? { name: 'rwWrite(line)', script: rwWriteScript, keys: [WRITER, READERS, CLAIM, ...WRITERS_LINE], args: [v, t, claim, '', 'line', LEASE_MS, ticketOf(v)] }
      : { name: 'rwWrite', script: rwWriteScript, keys: [WRITER, READERS, CLAIM], args: [v, t, claim] },
  ),
  fc.tuple(valueArb, ttlArb).map(([v, t]): Step => ({ name: 'rwReadExtend', script: rwReadExtendScript, keys: [READERS, WRITER], args: [v, t] })),
  valueArb.map((v): Step => ({ name: 'rwReadRelease', script: rwReadReleaseScript, keys: [READERS, WRITER, CLAIM, ...WRITERS_LINE], args: [v] })),
  fc.tuple(valueArb, fc.constantFrom(100, 600)).map(([v, reservation]): Step => ({
    name: 'rwWriteRelease',
    script: rwWriteReleaseScript,
    keys: RELEASE_KEYS,
    args: [v, reservation],
  })),
  fc.constantFrom(1, 60, 400, 700).map((ms): Step => ({ name: 'advance', ms })),
).map(named);

describe("the read-write lock's scripts on one node", () => {
  it(
    'never let a live writer key and a live reader lease stand together, whatever the calls and the time',
    async () => {
      const seen: Record<string, number> = {};
      await checkProperty(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
          const clock = new FakeClock(START_MS);
          const node = new InMemoryNode('rw', clock);
          for (const [index, step] of steps.entries()) {
            if ('ms' in step) clock.advance(step.ms);
            else await node.evalsha(step.script.sha, step.keys.length, ...step.keys, ...step.args).catch(() => node.eval(step.script.source, step.keys.length, ...step.keys, ...step.args));
            seen[step.name] = (seen[step.name] ?? 0) + 1;
            const writer = node.get(WRITER);
            const liveReaders = node.sortedSet(READERS).filter(([, until]) => until > clock.now());
            if (writer !== undefined) {
              expect(liveReaders, `step ${index} (${step.name}): readers beside writer ${writer} after ${steps.slice(0, index + 1).map(shown).join(', ')}`).toEqual([]);
            }
          }
        }),
        RUNS,
      );
      report('read-write lock on one node', seen);
      expect(seen['rwWriteRelease'] ?? 0).toBeGreaterThan(0);
    },
    timeoutFor(RUNS, 60_000),
  );
});


