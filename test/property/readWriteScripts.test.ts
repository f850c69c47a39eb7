/**
 * The read-write lock's scripts against their model: random read / read
 * extend (or downgrade) / readers' batched extend (renewEach.lua) / read release / write (with and without fencing) /
 * writer extend (the mutex's) / writer release (rwWriteRelease) / advance sequences, with few values so
 * they collide, run on a real redis-server through RedisNodeBackend and on
 * a SimulatedReadWriteNode; replies, keys, values, TTLs and the readers'
 * leases must agree after every step.
 *
 * Two clocks move together. TTLs (the writer's key, the claim, the readers'
 * set) run on Redis's own: time moves in whole seconds by taking it off every
 * TTL (the skew nemesis' jump). The readers' leases are scored by the
 * scripts' server_time, which reads TIME in the library; here it reads a
 * counter the test moves by the same seconds, so a lease ends exactly when
 * the model says it does, and no step lands on a boundary by chance. Only
 * server_time's body (line.lua's, shared with the wait-line scripts) is not
 * the library's here; the read-write lock's integration tests run it.
 */
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedisNodeBackend } from '../../src/node/RedisNodeBackend.js';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { fencingKeyFor } from '../../src/scripts/fencingKey.js';
import { LuaScript } from '../../src/scripts/LuaScript.js';
import readSource from '../../src/scripts/rwRead.lua';
import readExtendSource from '../../src/scripts/rwReadExtend.lua';
import { renewEachScript } from '../../src/scripts/renewEach.js';
import lineSource from '../../src/scripts/line.lua';
import { lineAndLeaseFor } from '../../src/scripts/lineKeys.js';
import readReleaseSource from '../../src/scripts/rwReadRelease.lua';
import wakeSource from '../../src/scripts/rwWake.lua';
import writeSource from '../../src/scripts/rwWrite.lua';
import writeReleaseSource from '../../src/scripts/rwWriteRelease.lua';
import { SimulatedReadWriteNode } from '../support/SimulatedReadWriteNode.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { checkProperty, timeoutFor } from './fcConfig.js';
import { ModelTime, expectTtl, oneRealNode } from './modelCheck.js';

const UNIT_MS = 1000;
const RUNS = 400;
/** The scripts' clock at the start of a run, in ms: large enough that a first fencing token is the clock's, as on a real node. */
const START_MS = 1_700_000_000_000;
const CLOCK_KEY = 'model:now';

// Put after line.lua's helpers, it stands in for line.lua's server_time in the code that follows.
const MODEL_CLOCK = `
local function server_time()
  local now = tonumber(redis.call('GET', '${CLOCK_KEY}'))
  return now, now * 1000
end
`;
/** A script as lineScript() builds it, with the model's clock. */
const withModelClock = (name: string, ...sources: string[]) =>
  new LuaScript(`${name}-model-clock`, [lineSource, 'line_helpers()', MODEL_CLOCK, ...sources].join('\n'));
const readScript = withModelClock('rwRead', readSource);
const readExtendScript = withModelClock('rwReadExtend', readExtendSource);
/** As rwReadExtendEachScript is built (readWrite.ts), with the model's clock. */
const readExtendEachScript = renewEachScript('rwReadExtendEach-model-clock', [lineSource, 'line_helpers()', MODEL_CLOCK], readExtendSource);
const readReleaseScript = withModelClock('rwReadRelease', wakeSource, readReleaseSource);
const writeScript = withModelClock('rwWrite', writeSource);
const writeReleaseScript = withModelClock('rwWriteRelease', wakeSource, writeReleaseSource);

const [WRITER, READERS, CLAIM] = readWriteKeys('r');
const FENCING = fencingKeyFor(WRITER);
// With nobody in these lines, the releases wake nobody: what is checked is what they do to the keys.
const RELEASE_KEYS = [WRITER, READERS, CLAIM, ...lineAndLeaseFor(WRITER), ...lineAndLeaseFor(READERS)];
const STRING_KEYS = [WRITER, CLAIM, FENCING];

type Command =
  | { readonly op: 'read' | 'readExtend' | 'writeExtend'; readonly value: string; readonly ttlMs: number }
  | { readonly op: 'readExtendEach'; readonly readers: readonly { readonly value: string; readonly ttlMs: number }[] }
  | { readonly op: 'readRelease' | 'writeRelease'; readonly value: string }
  | { readonly op: 'write'; readonly value: string; readonly ttlMs: number; readonly claimMs: number; readonly fence: boolean }
  | { readonly op: 'advance'; readonly ms: number };

const valueArb = fc.constantFrom('v1', 'v2', 'v3');
const unitsArb = (max: number) => fc.integer({ min: 1, max }).map((k) => k * UNIT_MS);
// Short TTLs and advances, and reads and advances weighted up, so that leases
// often end exactly at the time a later script runs: the boundary of each prune.
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('read' as const), value: valueArb, ttlMs: unitsArb(4) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('readExtend' as const, 'writeExtend' as const), value: valueArb, ttlMs: unitsArb(4) }) },
  // A batch of readers' renewals (renewEach.lua): each as rwReadExtend alone, in order, a downgrade among them.
  { weight: 1, arbitrary: fc.record({ op: fc.constant('readExtendEach' as const), readers: fc.array(fc.record({ value: valueArb, ttlMs: unitsArb(4) }), { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('readRelease' as const, 'writeRelease' as const), value: valueArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('write' as const), value: valueArb, ttlMs: unitsArb(4), claimMs: unitsArb(3), fence: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3 }).map((k) => k * UNIT_MS) }) },
);

const realNode = oneRealNode();

const isOne = (reply: unknown) => Number(reply);
/** A batch's answers as one number, a digit per reader (1 renewed, 2 not): comparable like the other replies. */
const digits = (renewed: readonly boolean[]) => Number(renewed.map((one) => (one ? '1' : '2')).join(''));
const token = (reply: unknown) => (Array.isArray(reply) ? BigInt(reply[0] as number | string) : Number(reply));

function onRedis(real: RedisNodeBackend, command: Exclude<Command, { op: 'advance' }>): Promise<number | bigint> {
  switch (command.op) {
    case 'read':
      return real.runScript(readScript, [WRITER, READERS, CLAIM], [command.value, command.ttlMs], isOne);
    case 'readExtend':
      return real.runScript(readExtendScript, [READERS, WRITER], [command.value, command.ttlMs], isOne);
    case 'readExtendEach':
      return real
        .renewEach(
          readExtendEachScript,
          command.readers.map(({ value, ttlMs }) => ({ keys: [READERS, WRITER], args: [value, ttlMs] })),
        )
        .then(digits);
    case 'readRelease':
      return real.runScript(readReleaseScript, [READERS, WRITER, CLAIM, ...lineAndLeaseFor(WRITER)], [command.value], isOne);
    case 'write':
      return command.fence
        ? real.runScript(writeScript, [WRITER, READERS, CLAIM, FENCING], [command.value, command.ttlMs, command.claimMs, 'fence'], token)
        : real.runScript(writeScript, [WRITER, READERS, CLAIM], [command.value, command.ttlMs, command.claimMs], token);
    case 'writeExtend':
      return real.extend([WRITER], command.value, command.ttlMs).then(Number);
    case 'writeRelease':
      return real.runScript(writeReleaseScript, RELEASE_KEYS, [command.value], isOne);
  }
}

function onModel(node: SimulatedReadWriteNode, command: Exclude<Command, { op: 'advance' }>): number | bigint {
  switch (command.op) {
    case 'read':
      return node.read(command.value, command.ttlMs);
    case 'readExtend':
      return node.readExtend(command.value, command.ttlMs);
    case 'readExtendEach':
      return digits(command.readers.map(({ value, ttlMs }) => node.readExtend(value, ttlMs) === 1));
    case 'readRelease':
      return node.readRelease(command.value);
    case 'write':
      return node.write(command.value, command.ttlMs, command.claimMs, command.fence);
    case 'writeExtend':
      return node.writeExtend(command.value, command.ttlMs);
    case 'writeRelease':
      return node.writeRelease(command.value);
  }
}

/** The ZRANGE WITHSCORES reply as [member, score] pairs. */
function pairs(flat: string[]): [string, number][] {
  const result: [string, number][] = [];
  for (let i = 0; i < flat.length; i += 2) result.push([flat[i] as string, Number(flat[i + 1])]);
  return result;
}

describe('the read-write scripts against SimulatedReadWriteNode', () => {
  it(
    'give the same replies, keys, values, TTLs and leases for random read/write/extend/release/advance sequences',
    async () => {
      const client = realNode();
      const real = new RedisNodeBackend(client);
      const nemesis = new SkewNemesis(client, { rate: 1 });
      const modelTime = new ModelTime(UNIT_MS);
      const seen = { read: 0, readRefused: 0, downgraded: 0, readExtended: 0, readReleased: 0, wrote: 0, fenced: 0, claimed: 0, claimBlocked: 0, readBatchMixed: 0 };
      await checkProperty(
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
          await client.flushall();
          await client.set(CLOCK_KEY, START_MS);
          const model = new SimulatedReadWriteNode({ writer: WRITER, readers: READERS, claim: CLAIM, fencing: FENCING }, START_MS);
          const startedAt = performance.now();
          let jumps = 0;
          for (const [step, command] of commands.entries()) {
            const where = `step ${step}: ${JSON.stringify(command)}`;
            if (command.op === 'advance') {
              model.advance(command.ms);
              await client.incrby(CLOCK_KEY, command.ms);
              if (command.ms > 0) {
                await nemesis.jump(command.ms);
                jumps++;
              }
            } else {
              const writerBefore = model.get(WRITER);
              const claimBefore = model.get(CLAIM);
              const expected = onModel(model, command);
              const actual = await onRedis(real, command);
              if (!modelTime.holds(startedAt)) return;
              expect(actual, where).toBe(expected);
              count(seen, command, expected, { writer: writerBefore, claim: claimBefore }, { writer: model.get(WRITER), claim: model.get(CLAIM) });
            }
            for (const key of STRING_KEYS) {
              const value = await client.get(key);
              if (!modelTime.holds(startedAt)) return;
              expect(value, `${where}, GET ${key}`).toBe(model.get(key));
            }
            const readers = pairs(await client.zrange(READERS, 0, -1, 'WITHSCORES'));
            if (!modelTime.holds(startedAt)) return;
            expect(readers, `${where}, readers`).toEqual(model.readerLeases());
            for (const key of [WRITER, CLAIM, READERS, FENCING]) {
              const pttl = await client.pttl(key);
              if (!modelTime.holds(startedAt)) return;
              expectTtl(`${where}, PTTL ${key}`, pttl, model.pttl(key), performance.now() - startedAt, jumps);
            }
          }
        }),
        RUNS,
      );
      modelTime.expectFewCut(RUNS);
      // Every branch of the scripts ran.
      for (const [what, times] of Object.entries(seen)) expect(times, what).toBeGreaterThan(0);
    },
    timeoutFor(RUNS, 60_000),
  );
});

function count(
  seen: Record<string, number>,
  command: Exclude<Command, { op: 'advance' }>,
  result: number | bigint,
  before: { readonly writer: string | null; readonly claim: string | null },
  after: { readonly writer: string | null; readonly claim: string | null },
): void {
  const add = (what: string) => {
    seen[what] = (seen[what] ?? 0) + 1;
  };
  switch (command.op) {
    case 'read':
      add(result === 1 ? 'read' : 'readRefused');
      break;
    case 'readExtend':
      if (result === 1) add(before.writer === command.value && after.writer === null ? 'downgraded' : 'readExtended');
      break;
    case 'readExtendEach':
      if (/1/.test(String(result)) && /2/.test(String(result))) add('readBatchMixed');
      break;
    case 'readRelease':
      if (result === 1) add('readReleased');
      break;
    case 'write':
      if (result !== 0) add(typeof result === 'bigint' ? 'fenced' : 'wrote');
      else if (after.claim === command.value) add('claimed');
      else if (before.claim !== null && before.claim !== command.value) add('claimBlocked');
      break;
    default:
      break;
  }
}
