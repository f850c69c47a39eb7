import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RELEASE_CHANNEL_PREFIX } from '../../src/scripts/release.js';

const scriptsDir = join(import.meta.dirname, '../../src/scripts');
const scripts = readdirSync(scriptsDir).filter((name) => name.endsWith('.lua'));

/**
 * Redis commands that exist in 5.0 with the arguments we use. GETDEL (6.2),
 * SET ... GET (6.2), EXPIRE ... GT (7.0) and FUNCTION (7.0) are not here.
 */
const REDIS_5_COMMANDS = new Set([
  'GET',
  'SET',
  'DEL',
  'EXISTS',
  'PEXPIRE',
  'PTTL',
  'INCR',
  'INCRBY',
  'PUBLISH',
  'TIME',
  'APPEND',
  // The wait lines (all in Redis since 1.2).
  'ZADD',
  'ZREM',
  'ZRANGE',
  'ZSCORE',
  'ZCARD',
  'ZCOUNT',
  // The read-write lock's readers (Redis 2.2).
  'ZREMRANGEBYSCORE',
  // leave.lua tells the readers' set from a lock key (Redis 1.0).
  'TYPE',
]);
/** Calls of the allowed commands that write. */
const WRITE_CALL = /redis\.p?call\(\s*'(SET|DEL|PEXPIRE|INCR|INCRBY|PUBLISH|APPEND|ZADD|ZREM|ZREMRANGEBYSCORE)'/g;
const SET_ARGUMENTS_IN_REDIS_5 = new Set(['PX', 'NX', 'XX', 'EX']);

function commandsOf(source: string): { command: string; args: string[] }[] {
  const calls = [...source.matchAll(/redis\.(?:p?call)\(([^)]*)\)/g)];
  return calls.map((match) => {
    const parts = (match[1] ?? '').split(',').map((part) => part.trim());
    const command = (parts[0] ?? '').replace(/^['"]|['"]$/g, '').toUpperCase();
    const args = parts.slice(1).filter((p) => /^['"]/.test(p)).map((p) => p.replace(/^['"]|['"]$/g, '').toUpperCase());
    return { command, args };
  });
}

describe('Lua scripts', () => {
  it('there are scripts to check', () => {
    expect(scripts).toEqual(expect.arrayContaining(['acquire.lua', 'extend.lua', 'release.lua']));
  });

  it.each(scripts)('%s uses only commands and arguments Redis 5.0 has', (name) => {
    const source = readFileSync(join(scriptsDir, name), 'utf8');
    const calls = commandsOf(source);
    // renewEach.lua calls no command of its own: it runs another script's body per holder (checked as that script).
    if (name !== 'renewEach.lua') expect(calls.length).toBeGreaterThan(0);
    for (const { command, args } of calls) {
      expect(REDIS_5_COMMANDS, `${name} calls ${command}`).toContain(command);
      if (command === 'SET') for (const arg of args) expect(SET_ARGUMENTS_IN_REDIS_5, `${name}: SET ${arg}`).toContain(arg);
    }
    expect(source).not.toMatch(/redis\.setresp|redis\.register_function|#!lua/);
  });

  it.each(scripts)('%s documents its KEYS, ARGV and return value in a header', (name) => {
    const header = readFileSync(join(scriptsDir, name), 'utf8').split('\n').filter((line) => line.startsWith('--')).join('\n');
    expect(header).toMatch(/KEYS/);
    expect(header).toMatch(/ARGV|no ARGV/);
    expect(header).toMatch(/Returns/);
  });

  // line.lua and rwWake.lua only define helpers (server_time reads TIME); the scripts that call them are checked.
  it.each(scripts.filter((name) => name !== 'line.lua' && name !== 'rwWake.lua'))('%s calls redis.replicate_commands() first if it reads TIME and then writes', (name) => {
    const source = readFileSync(join(scriptsDir, name), 'utf8');
    const body = source.split('\n').filter((line) => !line.trim().startsWith('--')).join('\n');
    const reads = [body.indexOf("'TIME'"), body.indexOf('server_time()')].filter((index) => index !== -1);
    if (reads.length === 0) return;
    const time = Math.min(...reads);
    // A script that only reads (inspect.lua) may read TIME freely; the line helpers write (line.lua).
    const writes = body.slice(time).match(WRITE_CALL) ?? (body.includes('first_live(') ? ['ZREM'] : []);
    if (writes.length === 0) return;
    const replicate = body.indexOf('redis.replicate_commands');
    expect(replicate, `${name} reads TIME`).toBeGreaterThanOrEqual(0);
    expect(replicate).toBeLessThan(time);
  });

  it('release.lua announces on the channel prefix that waiters subscribe to', () => {
    const source = readFileSync(join(scriptsDir, 'release.lua'), 'utf8');
    const body = source.split('\n').filter((line) => !line.trim().startsWith('--')).join('\n');
    expect(body).toContain(`'${RELEASE_CHANNEL_PREFIX}' .. key`);
  });

  it('every script that uses the line helpers gets them in front of its own source', async () => {
    const { acquireScript, keepaliveScript, leaveScript, releaseScript } = await import('../../src/scripts/index.js');
    const { semaphoreAcquireScript, semaphoreReleaseScript } = await import('../../src/scripts/semaphore.js');
    const { rwReadScript, rwReadReleaseScript, rwWriteScript, rwWriteReleaseScript } = await import('../../src/scripts/readWrite.js');
    const helpers = readFileSync(join(scriptsDir, 'line.lua'), 'utf8');
    const lineUsers = [acquireScript, keepaliveScript, leaveScript, releaseScript, semaphoreAcquireScript, semaphoreReleaseScript, rwReadScript, rwWriteScript];
    for (const script of [...lineUsers, rwReadReleaseScript, rwWriteReleaseScript]) expect(script.source.startsWith(helpers), script.name).toBe(true);
    const wake = readFileSync(join(scriptsDir, 'rwWake.lua'), 'utf8');
    for (const script of [rwReadReleaseScript, rwWriteReleaseScript]) expect(script.source.includes(wake), script.name).toBe(true);
  });

  it("the batched renewals run their primitive's own extend script, whole, per holder", async () => {
    const { semaphoreExtendEachScript } = await import('../../src/scripts/semaphore.js');
    const { rwReadExtendEachScript } = await import('../../src/scripts/readWrite.js');
    const each = readFileSync(join(scriptsDir, 'renewEach.lua'), 'utf8');
    for (const [script, body] of [
      [semaphoreExtendEachScript, 'semaphoreExtend.lua'],
      [rwReadExtendEachScript, 'rwReadExtend.lua'],
    ] as const) {
      expect(script.source, script.name).toContain(`local function renew_one(KEYS, ARGV)\n${readFileSync(join(scriptsDir, body), 'utf8')}\nend\n${each}`);
    }
    expect(rwReadExtendEachScript.source.startsWith(readFileSync(join(scriptsDir, 'line.lua'), 'utf8'))).toBe(true);
  });

  it('the allow-list check catches a command newer than Redis 5', () => {
    const calls = commandsOf("redis.call('GETDEL', KEYS[1]) redis.call('SET', KEYS[1], v, 'GET')");
    expect(REDIS_5_COMMANDS.has(calls[0]?.command ?? '')).toBe(false);
    expect(calls[1]?.args.every((a) => SET_ARGUMENTS_IN_REDIS_5.has(a))).toBe(false);
  });
});
