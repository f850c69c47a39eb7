/**
 * The simulated node is only worth what it agrees with: the same random
 * command sequences run on a SimulatedNode (FakeClock) and on a real
 * redis-server (RedisNodeBackend, the library's own Lua scripts) must give the
 * same replies, leave the same keys, values (waiters' marks included),
 * TTLs and wait lines, and announce the same releases and handoffs.
 *
 * Time: the fake clock is advanced in whole seconds, and the real node is
 * moved forward by the same amount by taking it off every key's TTL (the skew
 * nemesis' jump), so a sequence takes milliseconds, not minutes, and the real
 * time that does pass (well under a second) can never tip a key over its
 * expiry differently from the simulation. Real expiry is checked on its own.
 * Leases in the wait lines are counted on the server's TIME, which jumps do
 * not move: the simulation's server time stands still, and leases are whole
 * seconds, longer than a sequence takes, so none passes on either side (the
 * integration tests show real leases passing). Tickets come from TIME too,
 * so only their order is compared, through the lines' order.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedisNodeBackend } from '../../src/node/RedisNodeBackend.js';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { type Announce, RELEASE_CHANNEL_PREFIX } from '../../src/scripts/release.js';
import { FakeClock } from '../support/FakeClock.js';
import { SimulatedNode } from '../support/SimulatedNode.js';
import { SkewNemesis } from '../support/skewNemesis.js';
import { checkProperty, timeoutFor } from './fcConfig.js';
import { ModelTime, oneRealNode } from './modelCheck.js';

const UNIT_MS = 1000;
const KEYS = ['a', 'b', 'c', 'd'] as const;
const SEQUENCE_RUNS = 300;
const TTL_SLACK_MS = 50;

type Command =
  | { readonly op: 'acquire'; readonly keys: string[]; readonly value: string; readonly ttlMs: number }
  | { readonly op: 'acquireInLine'; readonly keys: string[]; readonly value: string; readonly ttlMs: number; readonly leaseMs: number }
  | { readonly op: 'keepalive'; readonly keys: string[]; readonly value: string; readonly leaseMs: number }
  | { readonly op: 'leave'; readonly keys: string[]; readonly value: string; readonly acquired: boolean }
  | { readonly op: 'extend'; readonly keys: string[]; readonly value: string; readonly ttlMs: number }
  | { readonly op: 'release'; readonly keys: string[]; readonly value: string; readonly announce: Announce }
  | { readonly op: 'undoInLine'; readonly keys: string[]; readonly value: string; readonly leaseMs: number }
  | { readonly op: 'advance'; readonly ms: number };

// Few keys and values, so commands collide; keys may repeat within one call, as the scripts allow.
const keysArb = fc.array(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 3 });
const valueArb = fc.constantFrom('v1', 'v2', 'v3');
const ttlArb = fc.integer({ min: 1, max: 12 }).map((k) => k * UNIT_MS);
const leaseArb = fc.integer({ min: 2, max: 6 }).map((k) => k * UNIT_MS);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant('acquire' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb }),
  fc.record({ op: fc.constant('acquireInLine' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb, leaseMs: leaseArb }),
  fc.record({ op: fc.constant('acquireInLine' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb, leaseMs: leaseArb }),
  fc.record({ op: fc.constant('keepalive' as const), keys: keysArb, value: valueArb, leaseMs: leaseArb }),
  fc.record({ op: fc.constant('leave' as const), keys: keysArb, value: valueArb, acquired: fc.boolean() }),
  fc.record({ op: fc.constant('extend' as const), keys: keysArb, value: valueArb, ttlMs: ttlArb }),
  fc.record({ op: fc.constant('release' as const), keys: keysArb, value: valueArb, announce: fc.constantFrom<Announce>('all', 'marked', 'plain', 'none') }),
  fc.record({ op: fc.constant('undoInLine' as const), keys: keysArb, value: valueArb, leaseMs: leaseArb }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 8 }).map((k) => k * UNIT_MS) }),
);

const realNode = oneRealNode();

type Reply = boolean | number | string;

/**
 * Each waiter brings its own ticket, the same to every node, as LinePosition
 * does: the scripts' fallback for a waiter without one (a counter raised to
 * the server's clock) depends on real time, which the simulation does not run.
 */
function disconnect(connections: readonly { disconnect(): void }[]): void {
  for (const connection of connections) connection.disconnect();
}

function ticketOf(value: string): number {
  return 1_000_000 + Number(value.replace(/\D/g, '') || 0);
}

/** Runs one command on both sides; a line attempt's reply is compared by what it says, not by its ticket. */
async function both(command: Exclude<Command, { op: 'advance' }>, simulated: SimulatedNode, real: RedisNodeBackend): Promise<[Reply, Reply]> {
  const { keys, value } = command;
  switch (command.op) {
    case 'release':
      return [await simulated.release(keys, value, command.announce), await real.release(keys, value, command.announce)];
    case 'undoInLine': {
      // The rejoin's server time differs between the two: only whether there was one is compared.
      const place = { ticket: ticketOf(value), leaseMs: command.leaseMs };
      const said = (undone: { released: number; rejoinedAtUs?: number }) => `${undone.released} ${undone.rejoinedAtUs === undefined ? 'out' : 'rejoined'}`;
      return [said(await simulated.undoInLine(keys, value, place)), said(await real.undoInLine(keys, value, place))];
    }
    case 'acquire':
      return [await simulated.acquire(keys, value, command.ttlMs), await real.acquire(keys, value, command.ttlMs)];
    case 'extend':
      return [await simulated.extend(keys, value, command.ttlMs), await real.extend(keys, value, command.ttlMs)];
    case 'acquireInLine': {
      const place = { ticket: ticketOf(value), leaseMs: command.leaseMs };
      const said = (reply: { granted: boolean }) => (reply.granted ? 'granted' : 'in line');
      return [
        said(await simulated.acquireInLine(keys, value, command.ttlMs, false, place)),
        said(await real.acquireInLine(keys, value, command.ttlMs, false, place)),
      ];
    }
    case 'keepalive': {
      const entries = [{ keys, value, ticket: ticketOf(value) }];
      return [await simulated.keepalive(entries, command.leaseMs), await real.keepalive(entries, command.leaseMs)];
    }
    case 'leave':
      return [await simulated.leave(keys, value, command.acquired), await real.leave(keys, value, command.acquired)];
  }
}

describe('SimulatedNode against a real redis-server', () => {
  it('gives the same replies, values and TTLs for random acquire/extend/release/advance sequences', async () => {
    const client = realNode();
    const real = new RedisNodeBackend(client);
    const nemesis = new SkewNemesis(client, { rate: 1 });
    const modelTime = new ModelTime(UNIT_MS);
    await checkProperty(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), async (commands) => {
        await client.flushall();
        const clock = new FakeClock(0);
        const simulated = new SimulatedNode('sim', clock);
        simulated.serverTime = new FakeClock(0);
        // Release announcements and handoffs (PUBLISHed by release.lua and leave.lua), counted per channel and payload on both.
        const heard = { real: new Map<string, number>(), simulated: new Map<string, number>() };
        const connections = [real.pubSub!.connect(), simulated.pubSub.connect()];
        connections.forEach((connection, side) => {
          const counts = side === 0 ? heard.real : heard.simulated;
          connection.onMessage((channel, message) => {
            const heardAs = `${channel}=${message}`;
            counts.set(heardAs, (counts.get(heardAs) ?? 0) + 1);
          });
        });
        await Promise.all(connections.map((c) => c.subscribe(...KEYS.map((key) => `${RELEASE_CHANNEL_PREFIX}${key}`))));
        const startedAt = performance.now();
        let jumps = 0;
        // Real time spent in the jumps' scripts (their round trips, which hold it).
        let jumpingMs = 0;
        for (const [step, command] of commands.entries()) {
          const where = `step ${step}: ${JSON.stringify(command)}`;
          if (command.op === 'advance') {
            clock.advance(command.ms);
            if (command.ms > 0) {
              const jumpStart = performance.now();
              await nemesis.jump(command.ms);
              jumpingMs += performance.now() - jumpStart;
              jumps++;
            }
          } else {
            const { keys, value } = command;
            const [expected, actual] = await both(command, simulated, real);
            if (!modelTime.holds(startedAt)) return disconnect(connections);
            expect(actual, where).toBe(expected);
          }
          // The whole keyspace agrees: same keys, same values, TTLs apart by no more than the real time that passed.
          const realKeys = (await client.keys('*')).sort();
          if (!modelTime.holds(startedAt)) return disconnect(connections);
          expect(realKeys, where).toEqual(simulated.keyNames().sort());
          for (const key of KEYS) {
            const [line] = lineKeysFor(key);
            const order = await client.zrange(line, 0, -1);
            if (!modelTime.holds(startedAt)) return disconnect(connections);
            expect(order, `${where}, line of ${key}`).toEqual(simulated.lineOrder(key));
          }
          for (const key of KEYS) {
            const [value, pttl] = await Promise.all([client.get(key), client.pttl(key)]);
            // Read after the reply: real time runs on while we wait for it, on a loaded machine for tens of ms.
            const elapsed = performance.now() - startedAt;
            if (!modelTime.holds(startedAt)) return disconnect(connections);
            expect(value ?? undefined, `${where}, GET ${key}`).toBe(simulated.get(key));
            const expectedTtl = simulated.pttl(key);
            if (expectedTtl === -2) {
              expect(pttl, `${where}, PTTL ${key}`).toBe(-2);
            } else {
              // Real time only shortens the real TTL (each jump may round it up by a millisecond), by
              // about the time that passed: Redis reads a cached clock, so allow a little more. Any
              // semantic difference is a whole unit (a second) or more.
              // A jump lengthens it too, by the real time between the PTTL it reads and the PEXPIRE it
              // writes (skew.lua: both count from the clock as it is then): microseconds, unless the
              // machine descheduled redis-server between the two, and never more than the jump's round
              // trip. Hence the lower bound's jumpingMs, which is about a millisecond a jump when quiet.
              expect(expectedTtl - pttl, `${where}, PTTL ${key}`).toBeGreaterThanOrEqual(-1 - jumps - jumpingMs);
              expect(expectedTtl - pttl, `${where}, PTTL ${key}`).toBeLessThanOrEqual(elapsed + TTL_SLACK_MS);
            }
          }
        }
        // Pub/sub messages come on their own connection: give them a moment to arrive.
        const announced = () => JSON.stringify([...heard.real].sort()) === JSON.stringify([...heard.simulated].sort());
        for (let i = 0; i < 100 && !announced(); i++) await sleep(10);
        disconnect(connections);
        expect(Object.fromEntries(heard.real), 'release announcements per key').toEqual(Object.fromEntries(heard.simulated));
      }),
      SEQUENCE_RUNS,
    );
    modelTime.expectFewCut(SEQUENCE_RUNS);
  }, timeoutFor(SEQUENCE_RUNS, 30_000));

  it('the simulated line drops waiters whose lease passed, and hands a release to the first live one', async () => {
    const clock = new FakeClock(0);
    const node = new SimulatedNode('sim', clock);
    const place = { ticket: 0, leaseMs: 600 };
    expect(await node.acquire(['k'], 'holder', 10_000)).toBe(true);
    expect((await node.acquireInLine(['k'], 'dead', 10_000, false, place)).granted).toBe(false);
    expect((await node.acquireInLine(['k'], 'live', 10_000, false, place)).granted).toBe(false);
    clock.advance(500);
    await node.keepalive([{ keys: ['k'], value: 'live', ticket: 0 }], 600);
    clock.advance(200);
    expect(await node.release(['k'], 'holder')).toBe(1);
    expect(node.get('k')).toBe('live');
    expect(node.lineOrder('k')).toEqual(['live']);
    expect(await node.acquireInLine(['k'], 'live', 10_000, false, place)).toEqual({ granted: true });
    expect(node.pttl('k')).toBe(10_000);
  });

  it('expires keys when their TTL has run out in real time, as the simulation does', async () => {
    const client = realNode();
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
