import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { CLI, jsonLine, readEvents, redisFlags, runCli, startCli, waitFor, WORKER } from './cliProcess.js';

let set: LocalNodeSet;
let clients: Redis[];
let urls: string[];
let dir: string;
let fileCount = 0;

beforeAll(async () => {
  set = await startNodes(3);
  clients = set.clients();
  urls = set.urls;
  dir = await mkdtemp(join(tmpdir(), 'quorumlock-nested-'));
});
afterAll(async () => {
  await set.stopAll();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await set.flushAll();
});

function file(name: string): string {
  fileCount++;
  return join(dir, `${name}-${fileCount}`);
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** The quorumlock command line, from source (bundled for this run), as a shell words string. */
const QUORUMLOCK = [process.execPath, CLI]
  .map(quote)
  .join(' ');

function workerWords(log: string, id: string, ...extra: string[]): string {
  return [process.execPath, WORKER, '--log', log, '--id', id, ...extra].map(quote).join(' ');
}

async function values(key: string): Promise<(string | null)[]> {
  return Promise.all(clients.map((client) => client.get(key)));
}

describe('quorumlock exec inside quorumlock exec', () => {
  it('runs the inner command at once under the outer lock, which is still held afterwards', async () => {
    const log = file('events.log');
    const go = file('go');
    const innerStatus = file('status');
    // --wait 0 for the inner exec: had it not re-entered, it would have exited 75 (busy) at once.
    const script = [
      `${QUORUMLOCK} exec ${redisFlags(urls).map(quote).join(' ')} --fencing --wait 0 job:nested -- ${workerWords(log, 'inner')}`,
      `echo $? > ${quote(innerStatus)}`,
      workerWords(log, 'after', '--hold-until', go),
    ].join('; ');
    const outer = startCli(['exec', ...redisFlags(urls), '--fencing', '--ttl', '20s', 'job:nested', '--', 'sh', '-c', script], {
      limitMs: 40_000,
    });
    await waitFor('the command after the inner exec to start', () => readEvents(log).some((e) => e.id === 'after'), 30_000);
    expect((await readFile(innerStatus, 'utf8')).trim()).toBe('0');
    const [inner, after] = readEvents(log).filter((e) => e.event === 'start');
    expect(inner?.id).toBe('inner');
    expect(inner?.value).toMatch(/^[0-9a-f]{8}\.[0-9a-f]{32}$/);
    expect(inner?.value).toBe(after?.value);
    expect(inner?.resource).toBe('job:nested');
    // The same lock, so the same fencing token.
    expect(inner?.fencingToken).toMatch(/^\d+$/);
    expect(inner?.fencingToken).toBe(after?.fencingToken);
    // The inner exec did not release the outer lock at its exit.
    expect((await values('job:nested')).filter((v) => v === after?.value).length).toBeGreaterThanOrEqual(2);

    await writeFile(go, '');
    const result = await outer.result;
    expect(result.code).toBe(0);
    await waitFor('the outer release to reach every node', async () => (await values('job:nested')).every((v) => v === null), 5000);
  }, 60_000);

  it("keeps exit codes: the inner command's status passes through both execs", async () => {
    const log = file('events.log');
    const script = `${QUORUMLOCK} exec ${redisFlags(urls).map(quote).join(' ')} job:status -- ${workerWords(log, 'inner', '--exit', '3')}`;
    const result = await runCli(['exec', ...redisFlags(urls), 'job:status', '--', 'sh', '-c', script], { limitMs: 40_000 });
    expect(result.code).toBe(3);
    expect(readEvents(log).map((e) => `${e.event} ${e.id}`)).toEqual(['start inner', 'end inner']);
    expect(await values('job:status')).toEqual([null, null, null]);
  }, 60_000);

  it('exits 79 (lost) without running the command when the inherited value no longer holds the resource', async () => {
    const log = file('events.log');
    const env = { QUORUMLOCK_RESOURCE: 'job:gone', QUORUMLOCK_LOCK_VALUE: 'f'.repeat(32) };
    const gone = await runCli(['exec', ...redisFlags(urls), '--json', 'job:gone', '--', process.execPath, WORKER, '--log', log, '--id', 'a'], {
      env,
    });
    expect(gone.code).toBe(79);
    expect(jsonLine(gone.stderr)).toMatchObject({ outcome: 'lost', exitCode: 79, code: 'QUORUMLOCK_LOCK_LOST' });
    expect(String(jsonLine(gone.stderr)['message'])).toContain('QUORUMLOCK_LOCK_VALUE');

    // Held, but by another value: refused the same way, and the holder's key is left alone.
    await Promise.all(clients.map((client) => client.set('job:gone', 'a'.repeat(32), 'PX', 20_000)));
    const foreign = await runCli(['exec', ...redisFlags(urls), 'job:gone', '--', process.execPath, WORKER, '--log', log, '--id', 'b'], { env });
    expect(foreign.code).toBe(79);
    expect(readEvents(log)).toEqual([]);
    expect(await values('job:gone')).toEqual(Array(3).fill('a'.repeat(32)));
  }, 60_000);

  it('locks another resource as usual, even inside an exec', async () => {
    const log = file('events.log');
    const env = { QUORUMLOCK_RESOURCE: 'job:outer', QUORUMLOCK_LOCK_VALUE: 'f'.repeat(32) };
    const result = await runCli(['exec', ...redisFlags(urls), 'job:other', '--', process.execPath, WORKER, '--log', log, '--id', 'a'], { env });
    expect(result.code).toBe(0);
    const [start] = readEvents(log);
    expect(start?.resource).toBe('job:other');
    expect(start?.value).not.toBe('f'.repeat(32));
  }, 60_000);
});
