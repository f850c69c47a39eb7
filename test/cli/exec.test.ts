import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lineKeysFor } from '../../src/scripts/lineKeys.js';
import { freePort } from '../support/freePort.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { pidExists } from '../support/processRegistry.js';
import { TcpProxy } from '../support/TcpProxy.js';
import {
  jsonLine,
  readEvents,
  redisFlags,
  runCli,
  startCli,
  waitFor,
  WORKER,
  type CliProcess,
} from './cliProcess.js';

let set: LocalNodeSet;
let clients: Redis[];
let dir: string;
let urls: string[];
let logCount = 0;

beforeAll(async () => {
  set = await startNodes(3);
  clients = set.clients();
  urls = set.urls;
  dir = await mkdtemp(join(tmpdir(), 'quorumlock-cli-'));
});
afterAll(async () => {
  await set.stopAll();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await set.flushAll();
});

/**
 * `--redis URL` for each URL, with a node timeout of 1 s. These tests are not about node timeouts:
 * the CLI's 50 ms default is missed under load whenever its process is descheduled for longer while
 * a request is out (once it runs again, the expired timer fires before the reply is read), and an
 * exec whose one attempt failed so never started its command. 1 s is the suite's margin for a live
 * node (test/support/patient.ts).
 */
function patientNodes(list: readonly string[]): string[] {
  return [...redisFlags(list), '--node-timeout', '1s'];
}

/** A fresh log file and a "let go" file for one test. */
function files(): { log: string; go: string } {
  logCount++;
  return { log: join(dir, `events-${logCount}.log`), go: join(dir, `go-${logCount}`) };
}

function worker(log: string, id: string, ...extra: string[]): string[] {
  return ['--', process.execPath, WORKER, '--log', log, '--id', id, ...extra];
}

/** Until worker `id`, run by `cli`, has started (fails with what the CLI printed if it exits first). */
async function started(log: string, id: string, cli: CliProcess): Promise<void> {
  await waitFor(`worker ${id} to start`, () => readEvents(log).some((e) => e.event === 'start' && e.id === id), undefined, cli);
}

/** How many waiters each node's wait line for `key` holds. */
async function inLine(key: string): Promise<number[]> {
  return Promise.all(clients.map((client) => client.zcard(lineKeysFor(key)[0])));
}

async function values(key: string): Promise<(string | null)[]> {
  return Promise.all(clients.map((client) => client.get(key)));
}

/** Until the CLI process `cli` has sent a lock request (its connection's last command is a script). */
async function attempting(cli: CliProcess): Promise<void> {
  const client = clients[0];
  if (!client) throw new Error('no client');
  await waitFor('the CLI to try for the lock', async () => {
    const list = await client.client('LIST');
    return String(list)
      .split('\n')
      .some((line) => line.includes(`name=quorumlock:exec:${cli.pid} `) && /cmd=(set|evalsha|eval|subscribe) /.test(line));
  }, undefined, cli);
}

describe('quorumlock exec', () => {
  it('runs the command with the lock held and tells it the resource, lock value and validity', async () => {
    const { log, go } = files();
    const cli = startCli(['exec', ...patientNodes(urls), '--ttl', '20s', 'job:env', ...worker(log, 'a', '--hold-until', go)], {
      env: { QUORUMLOCK_FENCING_TOKEN: 'inherited' },
    });
    await started(log, 'a', cli);
    const [start] = readEvents(log);
    expect(start?.resource).toBe('job:env');
    expect(start?.value).toMatch(/^[0-9a-f]{8}\.[0-9a-f]{32}$/);
    expect(Number(start?.validityMs)).toBeGreaterThan(0);
    expect(Number(start?.validityMs)).toBeLessThanOrEqual(20_000);
    // Without --fencing there is no token, not even one inherited from outside.
    expect(start?.fencingToken).toBeNull();
    // Redlock answers at quorum; on a loaded machine the third node's write may trail.
    const held = await values('job:env');
    expect(held.filter((v) => v === start?.value).length).toBeGreaterThanOrEqual(2);
    expect(held.filter((v) => v !== start?.value && v !== null)).toEqual([]);

    await writeFile(go, '');
    const result = await cli.result;
    expect(result.code).toBe(0);
    await waitFor('the release to reach every node', async () => (await values('job:env')).every((v) => v === null), 5000);
  });

  it('waits for its release to reach a slow node before it exits', async () => {
    const [fast1, fast2, slow] = set.endpoints;
    if (!fast1 || !fast2 || !slow) throw new Error('three nodes expected');
    // The vote ends at quorum without the slow node, both for acquire and release.
    const proxy = await TcpProxy.start({ host: slow.host, port: slow.port }, { latencyMs: 300 });
    try {
      const result = await runCli([
        'exec', '--redis', urls[0] ?? '', '--redis', urls[1] ?? '', '--redis', proxy.url,
        '--node-timeout', '5s', 'job:slow', '--', process.execPath, '-e', 'setTimeout(() => {}, 400)',
      ]);
      expect(result.code).toBe(0);
      // Asked at once, directly: nothing the CLI sent may still be on its way.
      expect(await values('job:slow')).toEqual([null, null, null]);
    } finally {
      await proxy.close();
    }
  });

  it("exits with the command's own status", async () => {
    const { log } = files();
    const result = await runCli(['exec', ...patientNodes(urls.slice(0, 1)), 'job:status', ...worker(log, 'a', '--exit', '3')]);
    expect(result.code).toBe(3);
    expect(await values('job:status')).toEqual([null, null, null]);
  });

  it('exits 128 + N when the command dies by signal N', async () => {
    const byTerm = await runCli(['exec', ...patientNodes(urls), 'job:sig', '--', 'sh', '-c', 'kill -TERM $$']);
    const byKill = await runCli(['exec', ...patientNodes(urls), 'job:sig', '--', 'sh', '-c', 'kill -KILL $$']);
    expect([byTerm.code, byKill.code]).toEqual([143, 137]);
  });

  it.each([1, 3])('never lets two concurrent execs of one resource overlap (%i node(s))', async (nodeCount) => {
    const { log } = files();
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const results = await Promise.all(
      ids.map((id) =>
        runCli(['exec', ...patientNodes(urls.slice(0, nodeCount)), '--wait', 'forever', 'job:mutex', ...worker(log, id, '--hold-ms', '100')], {
          limitMs: 40_000,
        }),
      ),
    );
    expect(results.map((r) => r.code), results.map((r) => r.stderr).join('\n')).toEqual([0, 0, 0, 0, 0]);
    // The log is in the order the workers wrote it: each start must be
    // followed by the same worker's end before anyone else starts.
    const events = readEvents(log).map((e) => `${e.event} ${e.id}`);
    expect(events).toHaveLength(ids.length * 2);
    for (let i = 0; i < events.length; i += 2) {
      const id = events[i]?.split(' ')[1];
      expect([events[i], events[i + 1]]).toEqual([`start ${id}`, `end ${id}`]);
    }
    expect(new Set(events.map((e) => e.split(' ')[1]))).toEqual(new Set(ids));
  }, 60_000);

  it('exits 75 (busy) at once with --wait 0 while another exec holds the lock', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:busy', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);

    const second = await runCli(['exec', ...patientNodes(urls), '--wait', '0', '--json', 'job:busy', ...worker(log, 'second')]);
    expect(second.code).toBe(75);
    expect(jsonLine(second.stderr)).toMatchObject({
      command: 'exec',
      ok: false,
      outcome: 'busy',
      exitCode: 75,
      code: 'QUORUMLOCK_LOCK_HELD',
    });
    expect(readEvents(log).some((e) => e.id === 'second')).toBe(false);

    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
  });

  it('with --quiet, prints nothing while another exec holds the lock, and still exits 75', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:quiet', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);

    const text = await runCli(['exec', ...patientNodes(urls), '--quiet', 'job:quiet', ...worker(log, 'text')]);
    const json = await runCli(['exec', ...patientNodes(urls), '--quiet', '--json', '--wait', '200ms', 'job:quiet', ...worker(log, 'json')]);
    for (const result of [text, json]) expect(result).toMatchObject({ code: 75, stdout: '', stderr: '' });

    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
    expect(readEvents(log).map((e) => e.id)).toEqual(['holder', 'holder']);
  });

  it('with --quiet, still prints every failure but busy', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const unavailable = await runCli(['exec', '--redis', dead, '--quiet', 'job:loud', '--', 'true']);
    const usage = await runCli(['exec', ...patientNodes(urls), '--quiet', '--ttl', 'soon', 'job:loud', '--', 'true']);
    const notFound = await runCli(['exec', ...patientNodes(urls), '--quiet', 'job:loud', '--', 'quorumlock-no-such-command']);
    expect(unavailable.code).toBe(69);
    expect(unavailable.stderr).toMatch(/ECONNREFUSED/);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toMatch(/'--ttl <duration>' argument 'soon' is invalid/);
    expect(notFound.code).toBe(127);
    expect(notFound.stderr).toMatch(/command not found/);
  });

  it('locks a RESOURCE that starts with - when it follows a -- of its own', async () => {
    const { log, go } = files();
    const cli = startCli(['exec', ...patientNodes(urls), '--', '-job:dash', ...worker(log, 'a', '--hold-until', go)]);
    await started(log, 'a', cli);
    const [start] = readEvents(log);
    expect(start?.resource).toBe('-job:dash');
    expect((await values('-job:dash')).filter((v) => v === start?.value).length).toBeGreaterThanOrEqual(2);

    const status = await runCli(['status', ...redisFlags(urls), '--json', '--', '-job:dash']);
    expect(jsonLine(status.stdout)).toMatchObject({ resource: '-job:dash', holder: start?.value });

    await writeFile(go, '');
    expect((await cli.result).code).toBe(0);
  });

  it('with --wait forever, runs the command once the holder lets go', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:wait', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);
    const waiter = startCli(['exec', ...patientNodes(urls), '--wait', 'forever', 'job:wait', ...worker(log, 'waiter')]);
    await attempting(waiter);
    // It waits in the nodes' wait lines, as any waiter of the library does: another host would line up behind it.
    await expect.poll(() => inLine('job:wait'), { timeout: 10_000, interval: 20 }).toEqual(clients.map(() => 1));

    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
    expect((await waiter.result).code).toBe(0);
    expect(readEvents(log).map((e) => `${e.event} ${e.id}`)).toEqual(['start holder', 'end holder', 'start waiter', 'end waiter']);
  });

  it('with --wait DURATION, gives up with 75 when the holder keeps the lock', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:timeout', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);
    const waiter = await runCli(['exec', ...patientNodes(urls), '--wait', '300ms', 'job:timeout', ...worker(log, 'waiter')]);
    expect(waiter.code).toBe(75);
    expect(waiter.stderr).toMatch(/held elsewhere/);
    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
    expect(readEvents(log).some((e) => e.id === 'waiter')).toBe(false);
  });

  describe('when the lock is lost while the command runs', () => {
    it('sends the command SIGTERM and exits 79', async () => {
      const { log, go } = files();
      const cli = startCli(['exec', ...patientNodes(urls), '--ttl', '1s', '--json', 'job:lost', ...worker(log, 'a', '--hold-until', go)]);
      await started(log, 'a', cli);
      await set.flushAll(); // the keys vanish behind the holder's back

      const result = await cli.result;
      expect(result.code).toBe(79);
      expect(jsonLine(result.stderr)).toMatchObject({ outcome: 'lost', exitCode: 79 });
      expect(readEvents(log).map((e) => `${e.event} ${e.signal ?? ''}`.trim())).toEqual(['start', 'signal SIGTERM']);
    });

    it('follows with SIGKILL after --grace when the command ignores SIGTERM', async () => {
      const { log, go } = files();
      const cli = startCli([
        'exec', ...patientNodes(urls), '--ttl', '1s', '--grace', '200ms', '--json', 'job:grace',
        ...worker(log, 'a', '--hold-until', go, '--ignore-term'),
      ]);
      await started(log, 'a', cli);
      await set.flushAll();

      const result = await cli.result;
      expect(result.code).toBe(79);
      expect(String(jsonLine(result.stderr)['message'])).toMatch(/SIGTERM, then SIGKILL; it exited with status 137/);
      expect(readEvents(log).map((e) => e.event)).toEqual(['start', 'signal']);
    });

    it('sends SIGKILL at once with --on-lost kill', async () => {
      const { log, go } = files();
      const cli = startCli([
        'exec', ...patientNodes(urls), '--ttl', '1s', '--on-lost', 'kill', 'job:kill', ...worker(log, 'a', '--hold-until', go),
      ]);
      await started(log, 'a', cli);
      await set.flushAll();

      const result = await cli.result;
      expect(result.code).toBe(79);
      expect(result.stderr).toMatch(/was lost while the command ran; sent it SIGKILL/);
      expect(readEvents(log).map((e) => e.event)).toEqual(['start']);
    });

    it('also kills what the command started', async () => {
      const { log, go } = files();
      const pidFile = join(dir, `grandchild-${logCount}`);
      const cli = startCli([
        'exec', ...patientNodes(urls), '--ttl', '1s', 'job:group', ...worker(log, 'a', '--hold-until', go, '--grandchild', pidFile),
      ]);
      await started(log, 'a', cli);
      const grandchild = Number(await readFile(pidFile, 'utf8'));
      expect(pidExists(grandchild)).toBe(true);
      await set.flushAll();

      expect((await cli.result).code).toBe(79);
      await waitFor('the grandchild to die', () => !pidExists(grandchild));
    });
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('forwards %s to the command, releases the lock and exits with its status', async (signal, status) => {
    const { log, go } = files();
    const cli = startCli(['exec', ...patientNodes(urls), 'job:forward', ...worker(log, 'a', '--hold-until', go)]);
    await started(log, 'a', cli);
    cli.child.kill(signal);

    const result = await cli.result;
    expect(result.code).toBe(status);
    expect(readEvents(log).filter((e) => e.event === 'signal').map((e) => e.signal)).toEqual([signal]);
    expect(await values('job:forward')).toEqual([null, null, null]);
  });

  it('stops waiting on SIGINT, exits 130 and never runs the command', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:interrupt', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);
    const waiter = startCli(['exec', ...patientNodes(urls), '--wait', 'forever', 'job:interrupt', ...worker(log, 'waiter')]);
    await attempting(waiter);
    waiter.child.kill('SIGINT');

    const result = await waiter.result;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/interrupted by SIGINT while waiting/);
    // It left the lines (or its lease ran out): it holds up nobody.
    await expect.poll(() => inLine('job:interrupt'), { timeout: 5_000, interval: 20 }).toEqual(clients.map(() => 0));
    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
    expect(readEvents(log).some((e) => e.id === 'waiter')).toBe(false);
  });

  it('on SIGTERM while waiting in line, leaves the lines on every node before it exits: the next process is not held up', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), 'job:close-wait', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);
    const waiter = startCli(['exec', ...patientNodes(urls), '--wait', 'forever', 'job:close-wait', ...worker(log, 'waiter')]);
    await expect.poll(() => inLine('job:close-wait'), { timeout: 10_000, interval: 20 }).toEqual(clients.map(() => 1));
    waiter.child.kill('SIGTERM');

    const result = await waiter.result;
    expect(result.code).toBe(143);
    expect(result.stderr).toMatch(/interrupted by SIGTERM while waiting/);
    // Left before it exited (the locker's close() waits for it), not after a lease runs out: no polling.
    expect(await inLine('job:close-wait')).toEqual(clients.map(() => 0));
    await writeFile(go, '');
    expect((await holder.result).code).toBe(0);
  });

  it('sent SIGTERM while its command runs, releases the lock on every node before it exits: the next holder does not wait for the TTL', async () => {
    const { log, go } = files();
    const holder = startCli(['exec', ...patientNodes(urls), '--ttl', '60s', 'job:close-hold', ...worker(log, 'holder', '--hold-until', go)]);
    await started(log, 'holder', holder);
    // Its limit (25 s) is well short of the holder's TTL: it gets the lock from the release or not at all.
    const next = startCli(['exec', ...patientNodes(urls), '--wait', 'forever', 'job:close-hold', ...worker(log, 'next')]);
    await expect.poll(() => inLine('job:close-hold'), { timeout: 10_000, interval: 20 }).toEqual(clients.map(() => 1));
    holder.child.kill('SIGTERM');

    expect((await holder.result).code).toBe(143);
    expect((await next.result).code).toBe(0);
    expect(readEvents(log).map((e) => `${e.event} ${e.id}`)).toEqual(['start holder', 'signal holder', 'start next', 'end next']);
    expect(await values('job:close-hold')).toEqual([null, null, null]);
  });

  it('exits 127 for a command that does not exist and 126 for one that cannot run, and releases the lock', async () => {
    const missing = await runCli(['exec', ...patientNodes(urls), 'job:spawn', '--', 'quorumlock-no-such-command']);
    const notExecutable = await runCli(['exec', ...patientNodes(urls), 'job:spawn', '--', WORKER]);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/command not found: quorumlock-no-such-command/);
    expect(notExecutable.code).toBe(126);
    expect(await values('job:spawn')).toEqual([null, null, null]);
  });

  it('exits 69 (unavailable) when too few nodes answer', async () => {
    const deadUrls = [`redis://127.0.0.1:${await freePort()}`, `redis://127.0.0.1:${await freePort()}`];
    const { log } = files();
    const quorumDown = await runCli(['exec', ...patientNodes([urls[0] ?? '', ...deadUrls]), '--json', 'job:down', ...worker(log, 'a')]);
    const onlyNodeDown = await runCli(['exec', ...patientNodes(deadUrls.slice(0, 1)), 'job:down', ...worker(log, 'b')]);
    expect(quorumDown.code).toBe(69);
    const report = jsonLine(quorumDown.stderr);
    expect(report).toMatchObject({ outcome: 'unavailable', exitCode: 69, code: 'QUORUMLOCK_QUORUM_UNREACHABLE' });
    expect(String(report['message'])).toMatch(/could not connect: 127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    expect(onlyNodeDown.code).toBe(69);
    expect(readEvents(log)).toEqual([]);
  });

  it('still runs the command when a minority of nodes is down', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const result = await runCli(['exec', ...patientNodes([urls[0] ?? '', urls[1] ?? '', dead]), 'job:minority', '--', 'true']);
    expect(result.code).toBe(0);
  });

  it('with --fencing, hands each holder a larger token than the one before', async () => {
    const { log } = files();
    for (const id of ['first', 'second']) {
      const result = await runCli(['exec', ...patientNodes(urls), '--fencing', 'job:fence', ...worker(log, id)]);
      expect(result.code).toBe(0);
    }
    const tokens = readEvents(log)
      .filter((e) => e.event === 'start')
      .map((e) => BigInt(e.fencingToken ?? '-1'));
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).toBeGreaterThan(0n);
    expect(tokens[1]).toBeGreaterThan(tokens[0] ?? 0n);
  });

  it('takes the nodes from QUORUMLOCK_REDIS_URLS when no --redis is given', async () => {
    const { log } = files();
    const result = await runCli(['exec', 'job:env-urls', ...worker(log, 'a')], {
      env: { QUORUMLOCK_REDIS_URLS: urls.join(',') },
    });
    expect(result.code).toBe(0);
    expect(readEvents(log).map((e) => e.event)).toEqual(['start', 'end']);
  });
});
