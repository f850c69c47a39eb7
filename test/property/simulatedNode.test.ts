/**
 * The simulated node is only worth what it agrees with: the same random
 * command sequences run on a SimulatedNode (FakeClock) and on a real
 * redis-server (RedisNodeBackend, the library's own Lua scripts) must give the
 * same replies, leave the same keys, values (waiters' marks included) and
 * TTLs, and announce the same releases.
 *
 * Time: the fake clock is advanced in whole seconds, and the real node is
 * moved forward by the same amount by taking it off every key's TTL (the skew
 * nemesis' jump), so a sequence takes milliseconds, not minutes, and the real
 * time that does pass (well under a second) can never tip a key over its
 * expiry differently from the simulation. Real expiry is checked on its own.
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisNodeBackend } from '../../src/node/RedisNodeBackend.js';
import type { Announce } from '../../src/scripts/release.js';
import { FakeClock } from '../support/FakeClock.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { SimulatedNode } from '../support/SimulatedNode.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { checkProperty, timeoutFor } from './fcConfig.js';

const UNIT_MS = 1000;
const KEYS = ['a', 'b', 'c', 'd'] as const;
const SEQUENCE_RUNS = 300;
const TTL_SLACK_MS = 50;

type Command =
  | { readonly op: 'acquire'; readonly keys: string[]; readonly value: string; readonly ttlMs: number; readonly markIfHeld: boolean }
  | { readonly op: 'extend'; readonly keys: string[]; readonly value: string; readonly ttlMs: number }
  | { readonly op: 'release'; readonly keys: string[]; readonly value: string; readonly announce: Announce }
  | { readonly op: 'advance'; readonly ms: number };

// Few keys and values, so commands collide; keys may repeat within one call, as the scripts allow.
const keysArb = fc.array(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 });
const valueArb = fc.constantFrom('v1', 'v2', 'v3');
const ttlArb = fc.integer({ min: 1, max: 12 }).map((k) => k * UNIT_MS);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant('acquire' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb, markIfHeld: fc.boolean() }),
  fc.record({ op: fc.constant('extend' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb }),
  fc.record({ op: fc.constant('release' as const), keys: keysArb, value: valueArb, announce: fc.constantFrom<Announce>('all', 'marked', 'none') }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 8 }).map((k) => k * UNIT_MS) }),
);

let nodes: LocalNodeSet;
let client: Redis;

beforeAll(async () => {
  nodes = await startNodes(1);
  [client] = nodes.clients() as [Redis];
});

afterAll(async () => {
  await nodes?.stopAll();
});

describe('SimulatedNode against a real redis-server', () => {
  it('gives the same replies, values and TTLs for random acquire/extend/release/advance sequences', async () => {
    const real = new RedisNodeBackend(client);
    const nemesis = new SkewNemesis(client, { rate: 1 });
    await checkProperty(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
        await client.flushall();
        const clock = new FakeClock(0);
        const simulated = new SimulatedNode('sim', clock);
        // Release announcements (release.lua PUBLISHes the deletions waiters listen for), counted per key on both.
        const heard = { real: new Map<string, number>(), simulated: new Map<string, number>() };
        const hear = (side: Map<string, number>, key: string) => () => side.set(key, (side.get(key) ?? 0) + 1);
        const stops = await Promise.all(
          KEYS.flatMap((key) => [
            real.watchReleases([key], hear(heard.real, key), 2_000),
            simulated.watchReleases([key], hear(heard.simulated, key)),
          ]),
        );
        const startedAt = performance.now();
        let jumps = 0;
        for (const [step, command] of commands.entries()) {
          const where = `step ${step}: ${JSON.stringify(command)}`;
          if (command.op === 'advance') {
            clock.advance(command.ms);
            if (command.ms > 0) {
              await nemesis.jump(command.ms);
              jumps++;
            }
          } else {
            const { keys, value } = command;
            const [expected, actual] =
              command.op === 'release'
                ? [await simulated.release(keys, value, command.announce), await real.release(keys, value, command.announce)]
                : command.op === 'acquire'
                  ? [
                      await simulated.acquire(keys, value, command.ttlMs, command.markIfHeld),
                      await real.acquire(keys, value, command.ttlMs, command.markIfHeld),
                    ]
                  : [await simulated.extend(keys, value, command.ttlMs), await real.extend(keys, value, command.ttlMs)];
            expect(actual, where).toBe(expected);
          }
          // The whole keyspace agrees: same keys, same values, TTLs apart by no more than the real time that passed.
          const realKeys = (await client.keys('*')).sort();
          expect(realKeys, where).toEqual([...simulated.snapshot().keys()].sort());
          const elapsed = performance.now() - startedAt;
          for (const key of KEYS) {
            const [value, pttl] = await Promise.all([client.get(key), client.pttl(key)]);
            expect(value ?? undefined, `${where}, GET ${key}`).toBe(simulated.get(key));
            const expectedTtl = simulated.pttl(key);
            if (expectedTtl === -2) {
              expect(pttl, `${where}, PTTL ${key}`).toBe(-2);
            } else {
              // Real time only shortens the real TTL (each jump may round it up by a millisecond), by
              // about the time that passed: Redis reads a cached clock, so allow a little more. Any
              // semantic difference is a whole unit (a second) or more.
              expect(expectedTtl - pttl, `${where}, PTTL ${key}`).toBeGreaterThanOrEqual(-1 - jumps);
              expect(expectedTtl - pttl, `${where}, PTTL ${key}`).toBeLessThanOrEqual(elapsed + TTL_SLACK_MS);
            }
          }
        }
        // Pub/sub messages come on their own connection: give them a moment to arrive.
        const announced = () => JSON.stringify([...heard.real].sort()) === JSON.stringify([...heard.simulated].sort());
        for (let i = 0; i < 100 && !announced(); i++) await sleep(10);
        for (const stop of stops) stop();
        expect(Object.fromEntries(heard.real), 'release announcements per key').toEqual(Object.fromEntries(heard.simulated));
      }),
      SEQUENCE_RUNS,
    );
  }, timeoutFor(SEQUENCE_RUNS, 30_000));

  it('expires keys when their TTL has run out in real time, as the simulation does', async () => {
    const real = new RedisNodeBackend(client);
    await checkProperty(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ key: fc.constantFrom(...KEYS), ttlMs: fc.integer({ min: 5, max: 40 }) }), {
          minLength: 1,
          maxLength: 4,
          selector: (entry) => entry.key,
        }),
        async (entries) => {
          await client.flushall();
          const clock = new FakeClock(0);
          const simulated = new SimulatedNode('sim', clock);
          const setAt = performance.now();
          for (const { key, ttlMs } of entries) {
            expect(await real.acquire([key], 'v', ttlMs)).toBe(await simulated.acquire([key], 'v', ttlMs));
          }
          // Just set: present, with a TTL no longer than given (the simulation's is exact).
          for (const { key, ttlMs } of entries) {
            const pttl = await client.pttl(key);
            if (pttl !== -2) {
              expect(pttl).toBeLessThanOrEqual(ttlMs);
              expect(ttlMs - pttl).toBeLessThanOrEqual(performance.now() - setAt + 1);
            } else {
              // Only possible when this machine stalled past the TTL.
              expect(performance.now() - setAt).toBeGreaterThanOrEqual(ttlMs - 1);
            }
            expect(simulated.pttl(key)).toBe(ttlMs);
          }
          // One millisecond before its TTL a simulated key is there; at its TTL it is gone.
          const longest = Math.max(...entries.map((e) => e.ttlMs));
          for (const { key, ttlMs } of entries) {
            const probe = new SimulatedNode('probe', new FakeClock(0));
            await probe.acquire([key], 'v', ttlMs);
            (probe.clock as FakeClock).advance(ttlMs - 1);
            expect(probe.pttl(key)).toBe(1);
            (probe.clock as FakeClock).advance(1);
            expect(probe.get(key)).toBeUndefined();
          }
          // Past every TTL (real time, counted from after the last SET), every key is gone on both.
          await sleep(longest + 5);
          clock.advance(longest);
          for (const { key } of entries) {
            expect(await client.pttl(key)).toBe(-2);
            expect(simulated.pttl(key)).toBe(-2);
          }
          // And the scripts treat an expired key as free on both.
          expect(await real.acquire([entries[0]?.key as string], 'w', 1000)).toBe(true);
          expect(await simulated.acquire([entries[0]?.key as string], 'w', 1000)).toBe(true);
        },
      ),
      10,
    );
  }, timeoutFor(10, 30_000));
});
