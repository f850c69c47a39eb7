import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { TcpProxy } from '../support/TcpProxy.js';
import { jsonLine, redisFlags, runCli } from './cliProcess.js';

// One server reached under two names would vote twice: with [a, a', b] and a
// quorum of 2, `a` alone would grant the lock. Each test would see exit 0
// (the command ran) if the CLI did not catch it.

let set: LocalNodeSet;
let clients: Redis[];
let ports: number[];

/** A user that may lock but not run INFO, as a hardened ACL (-@dangerous) leaves it. */
const NO_INFO_USER = 'quorumlock-no-info';

beforeAll(async () => {
  set = await startNodes(2);
  clients = set.clients();
  ports = set.endpoints.map((endpoint) => endpoint.port);
  await Promise.all(clients.map((client) => client.call('ACL', 'SETUSER', NO_INFO_USER, 'on', '>secret', '~*', '&*', '+@all', '-info')));
});
afterAll(async () => {
  await set.stopAll();
});

function port(index: number): number {
  const found = ports[index];
  if (found === undefined) throw new Error(`no node #${index}`);
  return found;
}

describe('one Redis server named twice', () => {
  it('is refused with exit 64 when two host names resolve to it, naming both URLs', async () => {
    const urls = [`redis://127.0.0.1:${port(0)}`, `redis://localhost:${port(0)}`, `redis://127.0.0.1:${port(1)}`];
    const result = await runCli(['exec', ...redisFlags(urls), 'job:twice', '--', 'echo', 'ran']);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `Invalid --redis #2: redis://localhost:${port(0)} is the same Redis server as --redis #1 (redis://127.0.0.1:${port(0)})`,
    );
    expect(await Promise.all(clients.map((client) => client.exists('job:twice')))).toEqual([0, 0]);
  });

  it('is refused when a proxy in front of it gives it another address (same run_id)', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: port(0) });
    try {
      const urls = [`redis://127.0.0.1:${port(0)}`, `redis://127.0.0.1:${port(1)}`, proxy.url];
      const result = await runCli(['exec', ...redisFlags(urls), '--json', 'job:proxied', '--', 'echo', 'ran']);
      expect(result.code).toBe(64);
      expect(result.stdout).toBe('');
      const report = jsonLine(result.stderr);
      expect(report).toMatchObject({ outcome: 'usage', exitCode: 64, argument: '--redis #3' });
      expect(String(report['message'])).toMatch(
        new RegExp(`${proxy.url} is the same Redis server as --redis #1 \\(redis://127\\.0\\.0\\.1:${port(0)}\\): both report run_id \\w+`),
      );
    } finally {
      await proxy.close();
    }
  });

  it('is refused by the address it connects to where INFO is not allowed, and never prints the password', async () => {
    // 127.1 is 127.0.0.1 to the resolver but another host to a URL.
    const urls = [`redis://${NO_INFO_USER}:secret@127.0.0.1:${port(0)}`, `redis://${NO_INFO_USER}:secret@127.1:${port(0)}`];
    const result = await runCli(['exec', ...redisFlags(urls), 'job:no-info', '--', 'echo', 'ran']);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `redis://${NO_INFO_USER}:…@127.1:${port(0)} is the same Redis server as --redis #1 ` +
        `(redis://${NO_INFO_USER}:…@127.0.0.1:${port(0)}): both connect to 127.0.0.1:${port(0)}`,
    );
    expect(result.stderr).not.toContain('secret');
  });

  it('is refused by status too, before anything is read', async () => {
    const urls = [`redis://localhost:${port(1)}`, `redis://127.0.0.1:${port(1)}`];
    const result = await runCli(['status', ...redisFlags(urls), 'job:status']);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Invalid --redis #2: redis:\/\/127\.0\.0\.1:\d+ is the same Redis server as --redis #1/);
  });

  it('leaves two independent servers alone, even where INFO is not allowed', async () => {
    const urls = ports.map((p) => `redis://${NO_INFO_USER}:secret@127.0.0.1:${p}`);
    const result = await runCli(['exec', ...redisFlags(urls), 'job:independent', '--', 'echo', 'ran']);
    expect(result.stdout).toBe('ran\n');
    expect(result.code).toBe(0);
  });
});
