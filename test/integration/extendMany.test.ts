import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ScriptClient } from '../../src/scripts/LuaScript.js';
import { extendMany, extendManyScript, type RenewalEntry, RENEWALS_PER_CALL } from '../../src/scripts/extendMany.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
let client: Redis;

beforeAll(async () => {
  nodes = await startNodes(1);
  client = nodes.clients()[0] as Redis;
});
afterAll(async () => {
  client.disconnect();
  await nodes.stopAll();
});
beforeEach(async () => {
  await nodes.flushAll();
  // Loaded up front: each call is then one EVALSHA, not an EVALSHA answered NOSCRIPT and an EVAL.
  await client.script('LOAD', extendManyScript.source);
});

/** The real client, with every script call's argument count (after the key count and the keys) written down. */
function recording(target: Redis): { client: ScriptClient; argCounts: number[] } {
  const argCounts: number[] = [];
  const note = (numberOfKeys: number, keysAndArgs: readonly unknown[]) => argCounts.push(keysAndArgs.length - numberOfKeys);
  return {
    argCounts,
    client: {
      evalsha: (sha, numberOfKeys, ...keysAndArgs) => {
        note(numberOfKeys, keysAndArgs);
        return target.evalsha(sha, numberOfKeys, ...keysAndArgs);
      },
      eval: (source, numberOfKeys, ...keysAndArgs) => {
        note(numberOfKeys, keysAndArgs);
        return target.eval(source, numberOfKeys, ...keysAndArgs);
      },
    },
  };
}

const value = (i: number) => `tag.${i.toString(16).padStart(32, '0')}`;

async function pttls(keys: readonly string[]): Promise<number[]> {
  return Promise.all(keys.map((key) => client.pttl(key)));
}

describe('extendMany.lua', () => {
  it('extends the locks of one TTL whose keys still hold their values, in one script call of four arguments', async () => {
    const count = RENEWALS_PER_CALL;
    const lost = new Set([0, 7, 42, 99]);
    for (let i = 0; i < count; i++) await client.set(`same:${i}`, lost.has(i) ? 'someone-else' : value(i), 'PX', 5_000);
    const entries: RenewalEntry[] = Array.from({ length: count }, (_, i) => ({ keys: [`same:${i}`], value: value(i), ttlMs: 60_000 }));
    const { client: recorded, argCounts } = recording(client);

    const held = await extendMany(recorded, entries);

    expect(held).toEqual(entries.map((_, i) => !lost.has(i)));
    // One script call; the values travel as one argument, not one value, TTL and count per lock.
    expect(argCounts).toEqual([4]);
    const ttls = await pttls(entries.map((entry) => entry.keys[0] as string));
    ttls.forEach((ttl, i) => {
      // Another holder's key keeps its own 5 s TTL; ours took the new 60 s.
      if (lost.has(i)) expect(ttl, `key ${i}`).toBeLessThanOrEqual(5_000);
      else expect(ttl, `key ${i}`).toBeGreaterThan(50_000);
    });
    expect(await client.get('same:0')).toBe('someone-else');
  });

  it('a chunk with mixed TTLs gives each lock its own TTL', async () => {
    const ttls = [20_000, 40_000, 60_000, 80_000];
    const entries: RenewalEntry[] = ttls.map((ttlMs, i) => ({ keys: [`mixed:${i}`], value: value(i), ttlMs }));
    for (const entry of entries) await client.set(entry.keys[0] as string, entry.value, 'PX', 5_000);
    const { client: recorded, argCounts } = recording(client);

    expect(await extendMany(recorded, entries)).toEqual([true, true, true, true]);

    expect(argCounts).toEqual([1 + 3 * entries.length]);
    const after = await pttls(entries.map((entry) => entry.keys[0] as string));
    after.forEach((ttl, i) => {
      expect(ttl, `lock ${i}`).toBeLessThanOrEqual(ttls[i] as number);
      expect(ttl, `lock ${i}`).toBeGreaterThan((ttls[i] as number) - 10_000);
    });
  });

  it('a lock of several keys is extended only if every key holds its value; the next lock in the call is counted from its own keys', async () => {
    await client.set('multi:a', value(1), 'PX', 5_000);
    await client.set('multi:b', value(1), 'PX', 5_000);
    await client.set('multi:c', value(2), 'PX', 5_000);
    await client.set('multi:d', 'someone-else', 'PX', 5_000);
    await client.set('multi:e', value(3), 'PX', 5_000);
    const entries: RenewalEntry[] = [
      { keys: ['multi:a', 'multi:b'], value: value(1), ttlMs: 60_000 },
      { keys: ['multi:c', 'multi:d'], value: value(2), ttlMs: 60_000 },
      { keys: ['multi:e'], value: value(3), ttlMs: 60_000 },
    ];

    expect(await extendMany(client, entries)).toEqual([true, false, true]);

    const [a, b, c, d, e] = await pttls(['multi:a', 'multi:b', 'multi:c', 'multi:d', 'multi:e']);
    expect(Math.min(a!, b!, e!)).toBeGreaterThan(50_000);
    // Neither key of a lock that is not held everywhere moves: not ours, and not the one still ours.
    expect(Math.max(c!, d!)).toBeLessThanOrEqual(5_000);
  });

  it("extends a key a waiter marked (the value with a trailing '!') and not one holding a longer value", async () => {
    await client.set('marked:0', `${value(0)}!`, 'PX', 5_000);
    await client.set('marked:1', `${value(1)}x`, 'PX', 5_000);
    const entries: RenewalEntry[] = [0, 1].map((i) => ({ keys: [`marked:${i}`], value: value(i), ttlMs: 60_000 }));

    expect(await extendMany(client, entries)).toEqual([true, false]);
    expect(await client.get('marked:0')).toBe(`${value(0)}!`);
  });

  it('values of different lengths, or outside ASCII, are each matched whole', async () => {
    const values = ['short', 'a-much-longer-value-than-the-first', 'ünïcødé-1', 'ünïcødé-2'];
    for (const [i, v] of values.entries()) await client.set(`odd:${i}`, v, 'PX', 5_000);
    // Same length in characters as the values set, but not in bytes for the last two, and one of them swapped.
    const asked = ['short', 'a-much-longer-value-than-the-first', 'ünïcødé-1', 'ünïcødé-3'];
    const entries: RenewalEntry[] = asked.map((v, i) => ({ keys: [`odd:${i}`], value: v, ttlMs: 60_000 }));
    expect(await extendMany(client, entries)).toEqual([true, true, true, false]);

    const twoNonAscii: RenewalEntry[] = [2, 3].map((i) => ({ keys: [`odd:${i}`], value: values[i] as string, ttlMs: 60_000 }));
    expect(await extendMany(client, twoNonAscii)).toEqual([true, true]);
    expect(Math.min(...(await pttls(['odd:0', 'odd:1', 'odd:2', 'odd:3'])))).toBeGreaterThan(50_000);
  });

  it('more locks than one call takes go in calls of RENEWALS_PER_CALL, answered in order', async () => {
    const count = 2 * RENEWALS_PER_CALL + 17;
    const entries: RenewalEntry[] = Array.from({ length: count }, (_, i) => ({ keys: [`many:${i}`], value: value(i), ttlMs: 60_000 }));
    for (const [i, entry] of entries.entries()) if (i % 3 !== 0) await client.set(entry.keys[0] as string, entry.value, 'PX', 5_000);
    const { client: recorded, argCounts } = recording(client);

    expect(await extendMany(recorded, entries)).toEqual(entries.map((_, i) => i % 3 !== 0));
    expect(argCounts).toEqual([4, 4, 4]);
  });
});
