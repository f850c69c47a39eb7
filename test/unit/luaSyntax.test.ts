/**
 * Redis runs Lua 5.1; the in-memory node's VM is Lua 5.4, which would take
 * syntax that Redis rejects (integer division, bitwise operators, goto,
 * attribs). Every script quorumlock sends must parse as Lua 5.1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import luaparse from 'luaparse';
import { describe, expect, it } from 'vitest';
import { PROJECT_SCRIPTS } from '../../src/testing/scriptOps.js';

const parse51 = (source: string) => luaparse.parse(source, { luaVersion: '5.1' });
const scriptsDir = new URL('../../src/scripts/', import.meta.url);

describe('every script parses as Lua 5.1', () => {
  for (const file of readdirSync(scriptsDir).filter((name) => name.endsWith('.lua'))) {
    it(file, () => {
      expect(() => parse51(readFileSync(new URL(file, scriptsDir), 'utf8'))).not.toThrow();
    });
  }

  it('and so does each script as it is sent (helpers in front, batches around a body)', () => {
    expect(PROJECT_SCRIPTS.length).toBeGreaterThan(15);
    for (const script of PROJECT_SCRIPTS) expect(() => parse51(script.source), script.name).not.toThrow();
  });

  it('every .lua file is in a script of that list, so the in-memory node names its requests and the model check covers it', () => {
    const missing = readdirSync(scriptsDir)
      .filter((name) => name.endsWith('.lua'))
      .filter((file) => !PROJECT_SCRIPTS.some((script) => script.source.includes(readFileSync(new URL(file, scriptsDir), 'utf8').trim())));
    expect(missing).toEqual([]);
  });

  it('the guard refuses what Lua 5.4 takes and Lua 5.1 does not', () => {
    for (const newer of ['return 7 // 2', 'return 6 & 3', 'goto done ::done::', 'local x <const> = 1']) {
      expect(() => parse51(newer), newer).toThrow();
    }
  });
});
