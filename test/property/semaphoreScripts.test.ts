/**
 * The semaphore's scripts against their model: random acquire / extend /
 * batched extend (renewEach.lua) / release / advance sequences (few slots, values and limits, so they
 * collide) run on a real redis-server through RedisNodeBackend and on a
 * SimulatedSemaphoreNode, the node the quorum search uses; replies, keys,
 * values and TTLs must agree after every step. Time moves in whole seconds,
 * on Redis by taking it off every TTL (the skew nemesis' jump).
 */
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedisNodeBackend } from '../../src/node/RedisNodeBackend.js';
import { LuaScript } from '../../src/scripts/LuaScript.js';
import { readSemaphoreAcquire, semaphoreAcquireScript, semaphoreExtendEachScript, semaphoreExtendScript, semaphoreTakeScript } from '../../src/scripts/semaphore.js';
import { limitKey, permitKeys, slotKey } from '../../src/semaphore/permitKeys.js';
import { SimulatedSemaphoreNode } from '../support/SimulatedSemaphoreNode.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { checkProperty, timeoutFor } from './fcConfig.js';
import { ModelTime, expectTtl, oneRealNode } from './modelCheck.js';

const UNIT_MS = 1000;
const RESOURCE = 's';
const SLOTS = 3;
const RUNS = 150;

type Command =
  | { readonly op: 'acquire'; readonly slots: number[]; readonly value: string; readonly ttlMs: number; readonly limit: number; readonly probe: boolean }
  | { readonly op: 'extend'; readonly slots: number[]; readonly value: string; readonly ttlMs: number; readonly limit: number }
  | { readonly op: 'extendEach'; readonly holders: readonly Extend[] }
  | { readonly op: 'release'; readonly slots: number[]; readonly value: string }
  | { readonly op: 'take'; readonly order: number[]; readonly value: string; readonly ttlMs: number; readonly limit: number; readonly permits: number }
  | { readonly op: 'reserve'; readonly slot: number; readonly value: string; readonly ttlMs: number }
  | { readonly op: 'advance'; readonly ms: number };

const slotsArb = fc.uniqueArray(fc.nat(SLOTS - 1), { minLength: 1, maxLength: 2 });
const valueArb = fc.constantFrom('v1', 'v2', 'v3');
const ttlArb = fc.integer({ min: 1, max: 12 }).map((k) => k * UNIT_MS);
const limitArb = fc.constantFrom(3, 3, 3, 2);
type Extend = Extract<Command, { op: 'extend' }>;
const extendArb = fc.record({ op: fc.constant('extend' as const), slots: slotsArb, value: valueArb, ttlMs: ttlArb, limit: limitArb });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant('acquire' as const), slots: slotsArb, value: valueArb, ttlMs: ttlArb, limit: limitArb, probe: fc.boolean() }),
  extendArb,
  // A batch of renewals (renewEach.lua): each holder as semaphoreExtend alone, in order, holders colliding on slots.
  fc.record({ op: fc.constant('extendEach' as const), holders: fc.array(extendArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ op: fc.constant('release' as const), slots: slotsArb, value: valueArb }),
  // A later try where the node chooses (semaphoreTake.lua): every slot of the limit, in a random order.
  limitArb.chain((limit) =>
    fc.record({
      op: fc.constant('take' as const),
      order: fc.shuffledSubarray(Array.from({ length: limit }, (_, slot) => slot), { minLength: limit, maxLength: limit }),
      value: valueArb,
      ttlMs: ttlArb,
      limit: fc.constant(limit),
      permits: fc.integer({ min: 1, max: 2 }),
    }),
  ),
  // What a release's handoff leaves for a waiter in line (semaphoreRelease.lua): the slot reserved for it.
  fc.record({ op: fc.constant('reserve' as const), slot: fc.nat(SLOTS - 1), value: valueArb, ttlMs: ttlArb }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 8 }).map((k) => k * UNIT_MS) }),
);

const realNode = oneRealNode();

/** The SET semaphoreRelease.lua's handoff makes (its value and '~', the reservation's TTL), on Redis. */
const reserveScript = new LuaScript('reserve', "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1");

/** Every slot of the resource under `limit`: what a probing try names after its own. */
function allSlotsOf(limit: number): string[] {
  return Array.from({ length: limit }, (_, slot) => slotKey(RESOURCE, slot));
}

/** A batch's answers as one number, a digit per holder (1 extended, 2 not): comparable like the other replies. */
const digits = (extended: readonly boolean[]) => Number(extended.map((one) => (one ? '1' : '2')).join(''));

/** What a taken acquire also answered: its limit record's TTL (LiveLimitRecords). */
interface Answered {
  recordMs: number | undefined;
}

async function onRedis(real: RedisNodeBackend, command: Exclude<Command, { op: 'advance' }>, answered: Answered): Promise<number> {
  if (command.op === 'extendEach') {
    const entries = command.holders.map((h) => ({ keys: permitKeys(RESOURCE, h.slots), args: [h.value, h.ttlMs, h.limit] }));
    return digits(await real.renewEach(semaphoreExtendEachScript, entries));
  }
  // A take's chosen positions as one number behind a 1 (positions are 2-based: never 2, full).
  if (command.op === 'take') {
    const order = command.order.map((slot) => slotKey(RESOURCE, slot));
    const reply = await real.runScript(semaphoreTakeScript, [limitKey(RESOURCE), ...order], [command.value, command.ttlMs, command.limit, command.permits], readSemaphoreAcquire);
    answered.recordMs = reply.recordMs;
    if (reply.chosen) return Number(`1${reply.chosen.join('')}`);
    if (reply.full) return 2;
    return reply.recordedLimit === undefined ? 0 : -reply.recordedLimit;
  }
  if (command.op === 'reserve') {
    await real.runScript(reserveScript, [slotKey(RESOURCE, command.slot)], [`${command.value}~`, command.ttlMs], Number);
    return 1;
  }
  const keys = permitKeys(RESOURCE, command.slots);
  switch (command.op) {
    case 'acquire': {
      const [scriptKeys, args] = command.probe
        ? [[...keys, ...allSlotsOf(command.limit)], [command.value, command.ttlMs, command.limit, 'probe']]
        : [keys, [command.value, command.ttlMs, command.limit]];
      const reply = await real.runScript(semaphoreAcquireScript, scriptKeys, args, readSemaphoreAcquire);
      answered.recordMs = reply.recordMs;
      if (reply.full) return 2;
      return reply.recordedLimit === undefined ? Number(reply.taken) : -reply.recordedLimit;
    }
    case 'extend':
      return real.runScript(semaphoreExtendScript, keys, [command.value, command.ttlMs, command.limit], Number);
    case 'release':
      return real.release(keys, command.value, 'plain');
  }
}

function onModel(node: SimulatedSemaphoreNode, command: Exclude<Command, { op: 'advance' }>): number {
  if (command.op === 'extendEach') return digits(command.holders.map((h) => onModel(node, h) === 1));
  if (command.op === 'take') {
    const order = command.order.map((slot) => slotKey(RESOURCE, slot));
    const reply = node.take(limitKey(RESOURCE), order, command.value, command.ttlMs, command.limit, command.permits);
    return typeof reply === 'number' ? reply : Number(`1${reply.join('')}`);
  }
  if (command.op === 'reserve') {
    node.reserve(slotKey(RESOURCE, command.slot), command.value, command.ttlMs);
    return 1;
  }
  const keys = permitKeys(RESOURCE, command.slots);
  switch (command.op) {
    case 'acquire':
      return node.acquire(keys, command.value, command.ttlMs, command.limit, command.probe ? allSlotsOf(command.limit) : undefined);
    case 'extend':
      return node.extend(keys, command.value, command.ttlMs, command.limit);
    case 'release':
      return node.release(keys, command.value);
  }
}

describe('the semaphore scripts against SimulatedSemaphoreNode', () => {
  it(
    'give the same replies, keys, values and TTLs for random acquire/extend/release/advance sequences',
    async () => {
      const client = realNode();
      const real = new RedisNodeBackend(client);
      const nemesis = new SkewNemesis(client, { rate: 1 });
      const seen = { taken: 0, held: 0, full: 0, mismatch: 0, extended: 0, released: 0, batchMixed: 0, chose: 0, choseReserved: 0, takeFull: 0 };
      const modelTime = new ModelTime(UNIT_MS);
      const allKeys = [limitKey(RESOURCE), ...Array.from({ length: SLOTS }, (_, slot) => slotKey(RESOURCE, slot))];
      await checkProperty(
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
          await client.flushall();
          const model = new SimulatedSemaphoreNode();
          const startedAt = performance.now();
          let jumps = 0;
          for (const [step, command] of commands.entries()) {
            const where = `step ${step}: ${JSON.stringify(command)}`;
            if (command.op === 'advance') {
              model.advance(command.ms);
              if (command.ms > 0) {
                await nemesis.jump(command.ms);
                jumps++;
              }
            } else {
              const reservedBefore = command.op === 'take' && allKeys.some((key) => model.get(key) === `${command.value}~`);
              const expected = onModel(model, command);
              const answered: Answered = { recordMs: undefined };
              const actual = await onRedis(real, command, answered);
              if (!modelTime.holds(startedAt)) return;
              expect(actual, where).toBe(expected);
              if (command.op === 'acquire' || command.op === 'take') {
                // Taken: the record's TTL as the script left it, which the client trusts to skip reading it.
                if (expected === 1 || (command.op === 'take' && expected > 2)) expectTtl(`${where}, record TTL answered`, answered.recordMs ?? -3, model.pttl(limitKey(RESOURCE)), performance.now() - startedAt, jumps);
                else expect(answered.recordMs, where).toBeUndefined();
              }
              if (command.op === 'acquire') seen[expected === 1 ? 'taken' : expected === 0 ? 'held' : expected === 2 ? 'full' : 'mismatch']++;
              if (command.op === 'extend' && expected === 1) seen.extended++;
              // A batch in which one holder was renewed and another refused.
              if (command.op === 'extendEach' && /1/.test(String(expected)) && /2/.test(String(expected))) seen.batchMixed++;
              if (command.op === 'release' && expected > 0) seen.released++;
              if (command.op === 'take' && expected > 2) seen.chose++;
              if (command.op === 'take' && expected === 2) seen.takeFull++;
              // A take whose caller had a slot reserved (its value and '~' before the step).
              if (command.op === 'take' && expected > 2 && reservedBefore) seen.choseReserved++;
            }
            for (const key of allKeys) {
              const [value, pttl] = await Promise.all([client.get(key), client.pttl(key)]);
              const elapsed = performance.now() - startedAt;
              if (!modelTime.holds(startedAt)) return;
              expect(value, `${where}, GET ${key}`).toBe(model.get(key));
              expectTtl(`${where}, PTTL ${key}`, pttl, model.pttl(key), elapsed, jumps);
            }
          }
        }),
        RUNS,
      );
      modelTime.expectFewCut(RUNS);
      // Every branch of the scripts ran.
      for (const [what, count] of Object.entries(seen)) expect(count, what).toBeGreaterThan(0);
    },
    timeoutFor(RUNS, 60_000),
  );
});
