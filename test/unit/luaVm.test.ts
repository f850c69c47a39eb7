/**
 * The in-memory node's Lua VM keeps Redis's rules (script_lua.c): the reply
 * conversions, redis.call and redis.pcall, the reply helpers, read-only
 * globals, KEYS and ARGV as strings, numbers passed to commands as Redis
 * formats them, 64-bit integers, TIME from the injected clock, and scripts
 * cached by SHA1 per node (NOSCRIPT for others, also after a restart).
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { InMemoryNode } from '../../src/testing/InMemoryNode.js';
import { formatLuaNumber } from '../../src/testing/lua/replies.js';
import { FakeClock } from '../support/FakeClock.js';

beforeAll(() => InMemoryNode.ready());

const run = (source: string, keys: string[] = [], args: (string | number)[] = [], node = new InMemoryNode('vm')) => node.eval(source, keys.length, ...keys, ...args);

describe('reply conversions', () => {
  it('a number becomes an integer, truncated toward zero', async () => {
    expect(await run('return 3.7')).toBe(3);
    expect(await run('return -3.7')).toBe(-3);
    expect(await run('return 1700000000 * 1000000')).toBe(1_700_000_000_000_000);
    expect(await run('return {math.huge, -math.huge, 0/0, 2^64}')).toEqual([-(2 ** 63), -(2 ** 63), -(2 ** 63), -(2 ** 63)]);
  });

  it('false is nil, true is 1, nil is nil', async () => {
    expect(await run('return false')).toBeNull();
    expect(await run('return true')).toBe(1);
    expect(await run('return nil')).toBeNull();
  });

  it('a table is an array up to its first nil, nested tables and booleans converted', async () => {
    expect(await run("return {1, 'two', {3, false}, true, nil, 6}")).toEqual([1, 'two', [3, null], 1]);
  });

  it('{err = …} is an error reply and {ok = …} a status reply, also through the helpers', async () => {
    await expect(run("return {err = 'BOOM it broke'}")).rejects.toThrow(/^BOOM it broke$/);
    await expect(run("return redis.error_reply('MY failure')")).rejects.toThrow(/^MY failure$/);
    expect(await run("return {ok = 'FINE'}")).toBe('FINE');
    expect(await run("return redis.status_reply('DONE')")).toBe('DONE');
  });
});

describe('redis.call and redis.pcall', () => {
  it('redis.call raises a command error: the script ends with it', async () => {
    await expect(run("redis.call('SET', KEYS[1], 'x') redis.call('INCR', KEYS[1]) return 'not reached'", ['k'])).rejects.toThrow(/^ERR value is not an integer/);
  });

  it('redis.pcall returns the error as a table the script can look at', async () => {
    expect(await run("redis.call('SET', KEYS[1], 'x') local r = redis.pcall('INCR', KEYS[1]) return {type(r), r.err}", ['k'])).toEqual([
      'table',
      'ERR value is not an integer or out of range',
    ]);
  });

  it('command replies reach Lua as Redis converts them: nil as false, status as {ok}, integers as numbers', async () => {
    expect(await run("local v = redis.call('GET', KEYS[1]) local s = redis.call('SET', KEYS[1], 'v') return {tostring(v), s.ok, redis.call('EXISTS', KEYS[1]) + 1}", ['k'])).toEqual([
      'false',
      'OK',
      2,
    ]);
  });

  it('a number argument is written as Redis writes it: an integral float without a fraction', async () => {
    const node = new InMemoryNode('vm');
    await run("redis.call('SET', KEYS[1], 10 / 1) redis.call('SET', KEYS[2], 2.5) redis.call('SET', KEYS[3], 7)", ['a', 'b', 'c'], [], node);
    expect([node.get('a'), node.get('b'), node.get('c')]).toEqual(['10', '2.5', '7']);
    expect(formatLuaNumber(1e17)).toBe('1e+17');
    expect(formatLuaNumber(0.1)).toBe('0.10000000000000001');
  });

  it('arguments other than strings and numbers are refused', async () => {
    await expect(run("return redis.call('SET', KEYS[1], {})", ['k'])).rejects.toThrow(/^ERR Lua redis lib command arguments must be strings or integers/);
  });
});

describe('the script environment', () => {
  it('KEYS and ARGV hold strings, whatever was sent', async () => {
    expect(await run('return {type(KEYS[1]), type(ARGV[1]), ARGV[1], #ARGV}', ['k'], [42, 'x'])).toEqual(['string', 'string', '42', 2]);
  });

  it('a script may not write a global, nor read one that does not exist', async () => {
    await expect(run('leaked = 1 return 1')).rejects.toThrow(/^ERR .*readonly table/);
    await expect(run('return missing_global')).rejects.toThrow(/^ERR .*nonexistent global variable 'missing_global'/);
    expect(await run('local fine = 1 return fine')).toBe(1);
  });

  it('integers are 64-bit: TIME in microseconds is exact', async () => {
    const clock = new FakeClock(1_700_000_000_123);
    const node = new InMemoryNode('vm', clock);
    expect(await run("local t = redis.call('TIME') return tonumber(t[1]) * 1000000 + tonumber(t[2])", [], [], node)).toBe(1_700_000_000_123_000);
  });

  it('tonumber reads a string as the Lua 5.1 of Redis does (strtod): infinities and NaN too, as ZSCORE writes them', async () => {
    const node = new InMemoryNode('vm');
    await node.eval("redis.call('ZADD', KEYS[1], '+inf', 'up', '-inf', 'down') return 1", 1, 'z');
    expect(await run("return {tonumber(redis.call('ZSCORE', KEYS[1], 'up')) > 1e300, tonumber(redis.call('ZSCORE', KEYS[1], 'down')) < -1e300}", ['z'], [], node)).toEqual([1, 1]);
    expect(await run("local n = tonumber(' NaN ') return {tonumber('-Infinity') == -math.huge, n ~= n, tonumber('0x10'), tonumber('12abc') == nil, tonumber('ff', 16)}")).toEqual([1, 1, 16, 1, 255]);
  });

  it('TIME reads the injected clock and grows by at least a microsecond from call to call', async () => {
    const clock = new FakeClock(5_000);
    const node = new InMemoryNode('vm', clock);
    const first = await run("return redis.call('TIME')", [], [], node);
    const second = await run("return redis.call('TIME')", [], [], node);
    clock.advance(2_000);
    const later = await run("return redis.call('TIME')", [], [], node);
    expect([first, second, later]).toEqual([['5', '0'], ['5', '1'], ['7', '0']]);
  });

  it('a script that does not compile answers an error', async () => {
    await expect(run('return (')).rejects.toThrow(/^ERR Error compiling script/);
  });
});

describe('the script cache', () => {
  const source = "return 'cached'";
  const sha = createHash('sha1').update(source).digest('hex');

  it('EVALSHA of a script the node was never sent answers NOSCRIPT; after EVAL it runs', async () => {
    const node = new InMemoryNode('vm');
    await expect(node.evalsha(sha, 0)).rejects.toThrow(/^NOSCRIPT/);
    expect(await node.eval(source, 0)).toBe('cached');
    expect(await node.evalsha(sha, 0)).toBe('cached');
  });

  it('each node has its own cache, and a restart empties it', async () => {
    const node = new InMemoryNode('vm');
    const other = new InMemoryNode('other');
    await node.eval(source, 0);
    await expect(other.evalsha(sha, 0)).rejects.toThrow(/^NOSCRIPT/);
    node.restart();
    await expect(node.evalsha(sha, 0)).rejects.toThrow(/^NOSCRIPT/);
  });
});
