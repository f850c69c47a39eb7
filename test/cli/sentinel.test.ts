/** The CLI on a Sentinel-managed master, named by a redis+sentinel:// URL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLock } from '../../src/index.js';
import { SentinelGroup } from '../support/SentinelGroup.js';
import { jsonLine, runCli } from './cliProcess.js';

let group: SentinelGroup;
let url: string;

beforeAll(async () => {
  group = await SentinelGroup.start({ replicas: 1 });
  url = `redis+sentinel://${group.sentinelAddresses.map((a) => `${a.host}:${a.port}`).join(',')}/${group.name}`;
});
afterAll(() => group.stop());

describe('quorumlock on a redis+sentinel:// node', () => {
  it('runs a command under the lock on the master the sentinels name', async () => {
    const result = await runCli(['exec', '--redis', url, 'cron:nightly', '--', 'sh', '-c', 'echo "$QUORUMLOCK_LOCK_VALUE"']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^[0-9a-f]{8}\.[0-9a-f]{32}$/);
  });

  it('waits for the replica with --sync-replicas, and fails the node, naming the shortfall, when too few replicas answer', async () => {
    const synced = await runCli(['exec', '--redis', url, '--sync-replicas', '1', 'cron:synced', '--', 'true']);
    expect(synced.stderr).toBe('');
    expect(synced.code).toBe(0);
    // The group has one replica: asking for two can never be confirmed.
    const short = await runCli(['exec', '--redis', url, '--sync-replicas', '2', '--node-timeout', '1s', 'cron:synced', '--', 'true']);
    expect(short.code).toBe(69);
    expect(short.stderr).toContain('1 of 2 replicas acknowledged within 500 ms');
  });

  it('shows the holder of a lock taken through another Sentinel client, naming the node by master and sentinels', async () => {
    const lock = await new RedisLock(group.client()).acquire('orders:7', 30_000);
    const result = await runCli(['status', '--json', 'orders:7'], { env: { QUORUMLOCK_REDIS_URLS: url } });
    expect(result.code).toBe(0);
    const report = jsonLine(result.stdout);
    expect(report).toMatchObject({ held: true, holder: lock.value });
    expect((report['nodes'] as { node: string }[])[0]?.node).toBe(`${group.name} via sentinels ${url.slice('redis+sentinel://'.length, url.lastIndexOf('/'))}`);
    await lock.release();
  });
});
