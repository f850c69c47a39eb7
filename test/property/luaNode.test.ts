/**
 * The in-memory node (quorumlock/testing) against a real redis-server: for
 * every script family (the mutex's, the semaphore's, the read-write lock's),
 * random sequences of the library's script calls (through the same request
 * functions the lockers use) mixed with plain commands on the same keys and
 * with time advancing, sent to both. After every step the raw replies
 * (errors by their code), the release announcements heard on pub/sub and the
 * whole keyspace (types, values, sorted-set members and scores, and TTLs
 * within the real time the run took) must be equal.
 *
 * Both run the project's .lua files unchanged. The one thing told apart is
 * the clock: the node's TIME reads its injected clock; on Redis, the scripts
 * go out behind a prelude whose local `redis.call` answers TIME from a model
 * clock key the test moves with the node's (strictly increasing by 1 µs from
 * call to call, as the node's is). TTLs on Redis run on its own clock: time
 * moves in whole seconds by taking it off every TTL (the skew nemesis' jump).
 *
 * `npm run test:property -- --runs 2200 test/property/luaNode.test.ts` makes
 * more than 10,000 steps per family; the figures are printed with --verbose.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readWriteKeys } from '../../src/rwlock/readWriteKeys.js';
import { acquire, acquireFenced, acquireInLine } from '../../src/scripts/acquire.js';
import { extend } from '../../src/scripts/extend.js';
import { extendMany } from '../../src/scripts/extendMany.js';
import { fence } from '../../src/scripts/fence.js';
import { fencingKeyFor } from '../../src/scripts/fencingKey.js';
import { inspectKey } from '../../src/scripts/inspect.js';
import { keepalive, leave } from '../../src/scripts/line.js';
import { lineAndLeaseFor, lineKeysFor } from '../../src/scripts/lineKeys.js';
import type { LuaScript, ScriptClient } from '../../src/scripts/LuaScript.js';
import { rwReadExtendEachScript, rwReadExtendScript, rwReadReleaseScript, rwReadScript, rwWriteReleaseScript, rwWriteScript } from '../../src/scripts/readWrite.js';
import { release, undoInLine } from '../../src/scripts/release.js';
import { renewEach } from '../../src/scripts/renewEach.js';
import { semaphoreAcquireScript, semaphoreExtendEachScript, semaphoreExtendScript, semaphoreReleaseScript, semaphoreTakeScript } from '../../src/scripts/semaphore.js';
import { verify } from '../../src/scripts/verify.js';
import { limitKey, permitKeys, slotKey } from '../../src/semaphore/permitKeys.js';
import { InMemoryNode } from '../../src/testing/InMemoryNode.js';
import { PROJECT_SCRIPTS } from '../../src/testing/scriptOps.js';
import { FakeClock } from '../support/FakeClock.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { checkProperty, fullRun, report, runsFor, timeoutFor } from './fcConfig.js';
import { expectTtl, ModelTime, oneRealNode } from './modelCheck.js';

await InMemoryNode.ready();

const UNIT_MS = 1000;
const RUNS = 40;
/** The clocks at the start of a run, in ms: a real node's TIME is of this size. */
const START_MS = 1_700_000_000_000;
const CLOCK_KEY = 'model:now';
const LAST_US_KEY = 'model:us';
/** Real time a run may take before a TTL on Redis differs from the node's by more than the slack: see ModelTime. */
const TTL_TOLERANCE_FLOOR = 500;

/** In front of every script sent to Redis: TIME from the model's clock, every other command as it is. */
const TIME_PRELUDE = `local real_redis = redis
local redis = setmetatable({ call = function(command, ...)
  if command == 'TIME' then
    local now_us = tonumber(real_redis.call('GET', '${CLOCK_KEY}')) * 1000
    local last_us = tonumber(real_redis.call('GET', '${LAST_US_KEY}') or '0')
    if last_us + 1 > now_us then now_us = last_us + 1 end
    real_redis.call('SET', '${LAST_US_KEY}', string.format('%.0f', now_us))
    return { string.format('%.0f', math.floor(now_us / 1000000)), string.format('%.0f', now_us % 1000000) }
  end
  return real_redis.call(command, ...)
end }, { __index = real_redis })
`;
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const PRELUDED_SHA = new Map(PROJECT_SCRIPTS.map((script) => [script.sha, sha1(TIME_PRELUDE + script.source)]));

/** What one side answered to one request: the reply, or the error's code. */
type Answer = { readonly reply: unknown } | { readonly error: string };

interface Side {
  /** The script functions' client: records every raw answer. */
  readonly client: ScriptClient & { set(key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX'): Promise<unknown> };
  call(args: readonly (string | number)[]): Promise<unknown>;
  readonly answers: Answer[];
}

function recording(answers: Answer[], send: () => Promise<unknown>): Promise<unknown> {
  return send().then(
    (reply) => {
      answers.push({ reply });
      return reply;
    },
    (error: unknown) => {
      answers.push({ error: (error instanceof Error ? error.message : String(error)).split(' ')[0] as string });
      throw error;
    },
  );
}

function redisSide(redis: Redis): Side {
  const answers: Answer[] = [];
  return {
    answers,
    call: (args) => recording(answers, () => redis.call(String(args[0]), ...args.slice(1))),
    client: {
      evalsha: (sha, keyCount, ...rest) => recording(answers, () => redis.evalsha(PRELUDED_SHA.get(sha) ?? sha, keyCount, ...rest)),
      eval: (source, keyCount, ...rest) => recording(answers, () => redis.eval(TIME_PRELUDE + source, keyCount, ...rest)),
      set: (key, value, px, ttlMs, nx) => recording(answers, () => redis.set(key, value, px, ttlMs, nx)),
    },
  };
}

function nodeSide(node: InMemoryNode): Side {
  const answers: Answer[] = [];
  return {
    answers,
    call: (args) => recording(answers, () => node.command(...args)),
    client: {
      evalsha: (sha, keyCount, ...rest) => recording(answers, () => node.evalsha(sha, keyCount, ...rest)),
      eval: (source, keyCount, ...rest) => recording(answers, () => node.eval(source, keyCount, ...rest)),
      set: (key, value, px, ttlMs, nx) => recording(answers, () => node.command('SET', key, value, px, ttlMs, nx)),
    },
  };
}

/** One step of a family: the same call made on a side. */
type Step = { readonly name: string; readonly run: (side: Side) => Promise<unknown>; toString(): string } | { readonly name: 'advance'; readonly ms: number };

const valueArb = fc.constantFrom('v1', 'v2', 'v3');
const ttlArb = fc.integer({ min: 1, max: 6 }).map((k) => k * UNIT_MS);
const advanceArb: fc.Arbitrary<Step> = fc.integer({ min: 0, max: 4 }).map((k) => ({ name: 'advance' as const, ms: k * UNIT_MS }));
const step = (name: string, run: (side: Side) => Promise<unknown>): Step => ({ name, run, toString: () => name });

/** Plain commands on a family's keys, types mixed up on purpose (WRONGTYPE is an answer too). */
function plainCommandsOn(keys: readonly string[]): fc.Arbitrary<Step> {
  const key = fc.constantFrom(...keys);
  const member = valueArb;
  const score = fc.oneof(fc.integer({ min: 0, max: 5 }).map((k) => String(START_MS + k * UNIT_MS)), fc.constantFrom('1', '-inf', '+inf', '2.5'));
  const bound = fc.oneof(score, score.map((s) => `(${s}`));
  const command: fc.Arbitrary<(string | number)[]> = fc.oneof(
    fc.tuple(fc.constant('GET'), key),
    fc.tuple(fc.constant('SET'), key, member, fc.constantFrom([], ['PX', 2000], ['NX'], ['XX', 'PX', 3000], ['NX', 'PX', 1000], ['PX', 0])).map(([c, k, v, o]) => [c, k, v, ...o]),
    fc.tuple(fc.constant('DEL'), key),
    fc.tuple(fc.constant('EXISTS'), key, key),
    fc.tuple(fc.constant('PEXPIRE'), key, fc.constantFrom(1000, 4000, 0)),
    fc.tuple(fc.constant('APPEND'), key, fc.constantFrom('!', 'x')),
    fc.tuple(fc.constant('INCR'), key),
    fc.tuple(fc.constant('ZADD'), key, score, member),
    fc.tuple(fc.constant('ZSCORE'), key, member),
    fc.tuple(fc.constant('ZRANGE'), key, fc.constantFrom(0, -1), fc.constantFrom(0, -1, 5), fc.constantFrom('WITHSCORES')),
    fc.tuple(fc.constant('ZCARD'), key),
    fc.tuple(fc.constant('ZREM'), key, member),
    fc.tuple(fc.constant('ZCOUNT'), key, bound, bound),
    fc.tuple(fc.constant('ZREMRANGEBYSCORE'), key, bound, bound),
  );
  return command.map((args) => step(args.join(' '), (side) => side.call(args)));
}

// --- the mutex's scripts --------------------------------------------------------

const RESOURCES = fc.constantFrom(['r1'], ['r2'], ['r1', 'r2']);
const MUTEX_KEYS = ['r1', 'r2', ...lineKeysFor('r1'), ...lineKeysFor('r2'), fencingKeyFor('r1'), fencingKeyFor('r2')];
const placeArb = fc.record({ ticket: fc.constantFrom(0, 0, START_MS * 1000 + 5), leaseMs: ttlArb });
const mutexArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(RESOURCES, valueArb, ttlArb).map(([keys, v, t]) => step('acquire', (s) => acquire(s.client, keys, v, t))) },
  { weight: 1, arbitrary: fc.tuple(RESOURCES, valueArb, ttlArb).map(([keys, v, t]) => step('acquireFenced', (s) => acquireFenced(s.client, keys, v, t))) },
  {
    weight: 3,
    arbitrary: fc.tuple(RESOURCES, valueArb, ttlArb, fc.boolean(), placeArb).map(([keys, v, t, f, place]) => step('acquireInLine', (s) => acquireInLine(s.client, keys, v, t, f, place))),
  },
  { weight: 2, arbitrary: fc.tuple(RESOURCES, valueArb, ttlArb).map(([keys, v, t]) => step('extend', (s) => extend(s.client, keys, v, t))) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.record({ keys: RESOURCES, value: valueArb, ttlMs: ttlArb }), { minLength: 1, maxLength: 3 })
      .map((entries) => step('extendMany', (s) => extendMany(s.client, entries))),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(RESOURCES, valueArb, fc.constantFrom('marked', 'all', 'plain', 'none') as fc.Arbitrary<'marked' | 'all' | 'plain' | 'none'>).map(([keys, v, a]) => step(`release(${a})`, (s) => release(s.client, keys, v, a))),
  },
  { weight: 1, arbitrary: fc.tuple(RESOURCES, valueArb, placeArb).map(([keys, v, rejoin]) => step('undoInLine', (s) => undoInLine(s.client, keys, v, rejoin))) },
  { weight: 1, arbitrary: fc.tuple(RESOURCES, valueArb).map(([keys, v]) => step('verify', (s) => verify(s.client, keys, v))) },
  { weight: 1, arbitrary: fc.constantFrom('r1', 'r2').map((key) => step('inspect', (s) => inspectKey(s.client, key))) },
  {
    weight: 1,
    arbitrary: fc.tuple(RESOURCES, valueArb, fc.bigInt({ min: 1n, max: BigInt(START_MS) * 1000n + 10n })).map(([keys, v, t]) => step('fence', (s) => fence(s.client, keys, v, keys.map(() => t)))),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(fc.record({ keys: RESOURCES, value: valueArb, ticket: fc.constantFrom(1, START_MS * 1000 + 9) }), { minLength: 1, maxLength: 2 }), ttlArb)
      .map(([entries, lease]) => step('keepalive', (s) => keepalive(s.client, entries, lease))),
  },
  { weight: 1, arbitrary: fc.tuple(RESOURCES, valueArb, fc.boolean()).map(([keys, v, a]) => step('leave', (s) => leave(s.client, keys, v, a))) },
);

// --- the semaphore's ------------------------------------------------------------

const SEM = 's';
const slotsArb = fc.uniqueArray(fc.nat(2), { minLength: 1, maxLength: 2 });
const limitArb = fc.constantFrom(3, 3, 2);
const allSlots = (limit: number) => Array.from({ length: limit }, (_, slot) => slotKey(SEM, slot));
const SEM_KEYS = [limitKey(SEM), ...allSlots(3), ...lineAndLeaseFor(limitKey(SEM))];
/** A waiter's ticket: the same on every node, early or late in the line. */
const SEM_TICKET = fc.constantFrom(1, START_MS * 1000 + 9);
const raw = (reply: unknown) => reply;
const run = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) => (s: Side) => script.run(s.client, keys, args, raw);
const semaphoreArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(slotsArb, valueArb, ttlArb, limitArb, fc.constantFrom('plain', 'probe', 'line')).map(([slots, v, t, limit, mode]) => {
      const keys = permitKeys(SEM, slots);
      if (mode === 'probe') return step('semaphoreAcquire(probe)', run(semaphoreAcquireScript, [...keys, ...allSlots(limit)], [v, t, limit, 'probe']));
      if (mode === 'line') {
        return step('semaphoreAcquire(line)', run(semaphoreAcquireScript, [...keys, ...lineAndLeaseFor(limitKey(SEM)), ...allSlots(limit)], [v, t, limit, 'line', 2000, 0]));
      }
      return step('semaphoreAcquire', run(semaphoreAcquireScript, keys, [v, t, limit]));
    }),
  },
  { weight: 2, arbitrary: fc.tuple(slotsArb, valueArb, ttlArb, limitArb).map(([slots, v, t, limit]) => step('semaphoreExtend', run(semaphoreExtendScript, permitKeys(SEM, slots), [v, t, limit]))) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.tuple(slotsArb, valueArb, ttlArb, limitArb), { minLength: 1, maxLength: 3 })
      .map((holders) => step('semaphoreExtendEach', (s) => renewEach(s.client, semaphoreExtendEachScript, holders.map(([slots, v, t, limit]) => ({ keys: permitKeys(SEM, slots), args: [v, t, limit] }))))),
  },
  {
    // semaphoreTake.lua, as a later try sends it: every slot in the caller's order, the node choosing reserved slots, then free ones.
    weight: 3,
    arbitrary: fc
      .tuple(fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }), valueArb, ttlArb, fc.constantFrom(1, 1, 2), fc.constantFrom('plain', 'line'), SEM_TICKET)
      .map(([order, v, t, permits, mode, ticket]) => {
        const keys = [limitKey(SEM), ...order.map((slot) => slotKey(SEM, slot))];
        if (mode === 'line') return step('semaphoreTake(line)', run(semaphoreTakeScript, [...keys, ...lineAndLeaseFor(limitKey(SEM))], [v, t, 3, permits, 'line', 2000, ticket]));
        return step('semaphoreTake', run(semaphoreTakeScript, keys, [v, t, 3, permits]));
      }),
  },
  {
    // A release as each topology sends it: several nodes wake the line ('0'); one node reserves each freed slot for
    // the next waiter; an undo from the line first puts its caller back in its place.
    weight: 3,
    arbitrary: fc
      .tuple(slotsArb, valueArb, fc.constantFrom('0', '600', 'rejoin'), SEM_TICKET)
      .map(([slots, v, mode, ticket]) =>
        step(
          `semaphoreRelease(${mode === '0' ? 'wake' : mode === '600' ? 'reserve' : 'rejoin'})`,
          run(semaphoreReleaseScript, [...permitKeys(SEM, slots), ...lineAndLeaseFor(limitKey(SEM))], mode === 'rejoin' ? [v, 600, ticket, 2000] : [v, mode]),
        ),
      ),
  },
  { weight: 1, arbitrary: fc.tuple(slotsArb, valueArb).map(([slots, v]) => step('release(plain)', (s) => release(s.client, permitKeys(SEM, slots), v, 'plain'))) },
);

// --- the read-write lock's ------------------------------------------------------------

const [WRITER, READERS, CLAIM] = readWriteKeys('w');
const RW_FENCING = fencingKeyFor(WRITER);
const RW_RELEASE_KEYS = [WRITER, READERS, CLAIM, ...lineAndLeaseFor(WRITER), ...lineAndLeaseFor(READERS)];
const RW_KEYS = [WRITER, READERS, CLAIM, RW_FENCING, ...lineAndLeaseFor(WRITER), ...lineAndLeaseFor(READERS)];
const readWriteArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(valueArb, ttlArb).map(([v, t]) => step('rwRead', run(rwReadScript, [WRITER, READERS, CLAIM], [v, t]))) },
  // From the line: a place kept, or a reservation a writer's release handed it taken.
  {
    weight: 2,
    arbitrary: fc
      .tuple(valueArb, ttlArb, SEM_TICKET)
      .map(([v, t, ticket]) => step('rwRead(line)', run(rwReadScript, [WRITER, READERS, CLAIM, ...lineAndLeaseFor(READERS)], [v, t, 'line', 2000, ticket]))),
  },
  { weight: 1, arbitrary: fc.tuple(valueArb, ttlArb).map(([v, t]) => step('rwReadExtend', run(rwReadExtendScript, [READERS, WRITER], [v, t]))) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.tuple(valueArb, ttlArb), { minLength: 1, maxLength: 3 })
      .map((readers) => step('rwReadExtendEach', (s) => renewEach(s.client, rwReadExtendEachScript, readers.map(([v, t]) => ({ keys: [READERS, WRITER], args: [v, t] }))))),
  },
  { weight: 2, arbitrary: valueArb.map((v) => step('rwReadRelease', run(rwReadReleaseScript, [READERS, WRITER, CLAIM, ...lineAndLeaseFor(WRITER)], [v]))) },
  {
    weight: 2,
    arbitrary: fc.tuple(valueArb, ttlArb, ttlArb, fc.boolean()).map(([v, t, claim, f]) =>
      step('rwWrite', f ? run(rwWriteScript, [WRITER, READERS, CLAIM, RW_FENCING], [v, t, claim, 'fence']) : run(rwWriteScript, [WRITER, READERS, CLAIM], [v, t, claim])),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(valueArb, ttlArb, ttlArb, SEM_TICKET)
      .map(([v, t, claim, ticket]) => step('rwWrite(line)', run(rwWriteScript, [WRITER, READERS, CLAIM, ...lineAndLeaseFor(WRITER)], [v, t, claim, '', 'line', 2000, ticket]))),
  },
  { weight: 1, arbitrary: fc.tuple(valueArb, ttlArb).map(([v, t]) => step('extend(writer)', (s) => extend(s.client, [WRITER], v, t))) },
  { weight: 2, arbitrary: valueArb.map((v) => step('rwWriteRelease', run(rwWriteReleaseScript, RW_RELEASE_KEYS, [v, 600]))) },
  // A waiter of either side steps out of its line; a reader that gave up takes its reservation with it.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(READERS, WRITER), valueArb, fc.boolean()).map(([key, v, a]) => step('leave', (s) => leave(s.client, [key], v, a))) },
);

const FAMILIES = [
  { name: 'mutex', scripts: mutexArb, keys: MUTEX_KEYS, channels: ['r1', 'r2'] },
  { name: 'semaphore', scripts: semaphoreArb, keys: SEM_KEYS, channels: [limitKey(SEM)] },
  { name: 'read-write lock', scripts: readWriteArb, keys: RW_KEYS, channels: [WRITER, READERS] },
] as const;

// --- comparing ---------------------------------------------------------------------------

/**
 * Replies equal, but for TTL-sized numbers (a script's PTTL, inspect's
 * pttlMs) that real time may have shortened on Redis by up to the run's
 * elapsed time; counts, tickets and stamps are compared exactly.
 */
function expectSameReply(where: string, real: unknown, model: unknown, elapsedMs: number): void {
  if (typeof real === 'number' && typeof model === 'number' && model >= TTL_TOLERANCE_FLOOR && model < 1e7) {
    expectTtl(where, real, model, elapsedMs, 0);
    return;
  }
  if (typeof real === 'number' && typeof model === 'number' && Math.abs(model) > Number.MAX_SAFE_INTEGER) {
    // ioredis's reply parser sums an integer's digits in a double, so past 2^53
    // it may land a few units in the last place from the exact value the node gives.
    expect(Math.abs(real - model), `${where}: ${real} against ${model}`).toBeLessThanOrEqual(Math.abs(model) * 2 ** -48);
    return;
  }
  if (Array.isArray(real) && Array.isArray(model) && real.length === model.length) {
    real.forEach((item, i) => expectSameReply(`${where}[${i}]`, item, model[i], elapsedMs));
    return;
  }
  if (typeof real === 'object' && real !== null && typeof model === 'object' && model !== null && !Array.isArray(real)) {
    expect(Object.keys(real).sort(), where).toEqual(Object.keys(model).sort());
    for (const key of Object.keys(real)) expectSameReply(`${where}.${key}`, (real as Record<string, unknown>)[key], (model as Record<string, unknown>)[key], elapsedMs);
    return;
  }
  expect(real, where).toEqual(model);
}

/** Every key but the model's own, with its type, contents and TTL, as Redis lists them. */
async function realKeyspace(redis: Redis): Promise<Map<string, { contents: unknown; pttl: number }>> {
  const keys = (await redis.keys('*')).filter((key) => !key.startsWith('model:')).sort();
  const result = new Map<string, { contents: unknown; pttl: number }>();
  for (const key of keys) {
    const type = await redis.type(key);
    const contents = type === 'zset' ? pairs(await redis.zrange(key, 0, -1, 'WITHSCORES')) : await redis.get(key);
    result.set(key, { contents, pttl: await redis.pttl(key) });
  }
  return result;
}

function nodeKeyspace(node: InMemoryNode): Map<string, { contents: unknown; pttl: number }> {
  const result = new Map<string, { contents: unknown; pttl: number }>();
  for (const key of node.keyNames().sort()) {
    const value = node.get(key);
    result.set(key, { contents: value ?? node.sortedSet(key), pttl: node.pttl(key) });
  }
  return result;
}

function pairs(flat: string[]): [string, number][] {
  const result: [string, number][] = [];
  for (let i = 0; i < flat.length; i += 2) result.push([flat[i] as string, scoreOf(flat[i + 1] as string)]);
  return result;
}

function scoreOf(text: string): number {
  if (text === 'inf') return Infinity;
  if (text === '-inf') return -Infinity;
  return Number(text);
}

const realNode = oneRealNode();

describe('the in-memory node against a real redis-server (model check)', () => {
  for (const family of FAMILIES) {
    it(
      `${family.name}: the same script calls and plain commands give the same replies, announcements and keyspace`,
      async () => {
        const redis = realNode();
        await redis.script('FLUSH');
        const nemesis = new SkewNemesis(redis, { rate: 1 });
        const modelTime = new ModelTime(UNIT_MS);
        const subscriber = redis.duplicate();
        const channels = family.channels.map((key) => `quorumlock:released:${key}`);
        const heardOnRedis: string[] = [];
        subscriber.on('message', (channel: string, message: string) => heardOnRedis.push(`${channel} ${message}`));
        await subscriber.subscribe(...channels);
        const seen = new Map<string, number>();
        let steps = 0;
        const stepArb = fc.oneof({ weight: 6, arbitrary: family.scripts }, { weight: 2, arbitrary: plainCommandsOn(family.keys) }, { weight: 2, arbitrary: advanceArb });
        try {
          await checkProperty(
            fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 25 }), async (run) => {
              await redis.flushall();
              await redis.script('FLUSH');
              await redis.set(CLOCK_KEY, START_MS);
              heardOnRedis.length = 0;
              const clock = new FakeClock(START_MS);
              const node = new InMemoryNode('model', clock);
              const heardOnNode: string[] = [];
              const connection = node.pubSub.connect();
              connection.onMessage((channel, message) => heardOnNode.push(`${channel} ${message}`));
              await connection.subscribe(...channels);
              const real = redisSide(redis);
              const model = nodeSide(node);
              const startedAt = performance.now();
              let jumps = 0;
              try {
                for (const [index, current] of run.entries()) {
                  const where = `step ${index}: ${current.name}`;
                  if (current.name === 'advance') {
                    const { ms } = current as { ms: number };
                    clock.advance(ms);
                    await redis.incrby(CLOCK_KEY, ms);
                    if (ms > 0) {
                      await nemesis.jump(ms);
                      jumps++;
                    }
                  } else {
                    const call = current as { run: (side: Side) => Promise<unknown> };
                    const [onRedis, onNode] = await Promise.all([call.run(real).then(wrap, wrapError), call.run(model).then(wrap, wrapError)]);
                    await subscriber.ping();
                    if (!modelTime.holds(startedAt)) return;
                    const elapsed = performance.now() - startedAt;
                    expectSameReply(`${where}: raw replies`, real.answers, model.answers, elapsed);
                    expectSameReply(`${where}: what the library read`, onRedis, onNode, elapsed);
                    const kind = current.name.split(' ')[0] as string;
                    seen.set(kind, (seen.get(kind) ?? 0) + 1);
                    steps++;
                  }
                  real.answers.length = 0;
                  model.answers.length = 0;
                  expect(heardOnNode, `${where}: announcements`).toEqual(heardOnRedis);
                  const onRedis = await realKeyspace(redis);
                  if (!modelTime.holds(startedAt)) return;
                  const onNode = nodeKeyspace(node);
                  expect([...onRedis.keys()], `${where}: keys`).toEqual([...onNode.keys()]);
                  for (const [key, { contents, pttl }] of onRedis) {
                    const expected = onNode.get(key) as { contents: unknown; pttl: number };
                    expect(contents, `${where}: ${key}`).toEqual(expected.contents);
                    expectTtl(`${where}: PTTL ${key}`, pttl, expected.pttl, performance.now() - startedAt, jumps);
                  }
                }
              } finally {
                connection.disconnect();
              }
            }),
            RUNS,
          );
        } finally {
          subscriber.disconnect();
        }
        report(`${family.name}: ${steps} steps compared`, Object.fromEntries(seen));
        modelTime.expectFewCut(runsFor(RUNS));
        if (fullRun(RUNS)) expect(steps, 'steps compared').toBeGreaterThan(runsFor(RUNS) * 3);
      },
      timeoutFor(RUNS, 120_000),
    );
  }
});

/** A call's outcome, typed errors by their code: both sides must end alike. */
function wrap(value: unknown): unknown {
  return { value: withoutBigInts(value) };
}

function withoutBigInts(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(withoutBigInts);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutBigInts(v)]));
  return value;
}

function wrapError(error: unknown): unknown {
  return { error: (error instanceof Error ? error.message : String(error)).split(' ')[0] };
}
