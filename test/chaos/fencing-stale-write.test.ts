import { patient } from '../support/patient.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redlock } from '../../src/index.js';
import { FencedStore } from '../support/FencedStore.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const TTL_MS = 500;
let lockNodes: LocalNodeSet;
let storeNode: LocalNodeSet;
beforeAll(async () => {
  lockNodes = await startNodes(5);
  storeNode = await startNodes(1);
});
afterAll(async () => {
  await Promise.all([lockNodes.stopAll(), storeNode.stopAll()]);
});

function lineFrom(child: ChildProcess, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith(prefix));
      if (line) {
        child.stdout?.off('data', onData);
        resolve(line);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before printing "${prefix}": ${buffer}`)));
  });
}

it('refuses the write of a holder paused past its validity, once a newer holder has written', async () => {
  const root = join(import.meta.dirname, '../..');
  const ports = lockNodes.endpoints.map((e) => e.port).join(',');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'test/chaos/fixtures/pausedHolder.ts', ports, String(storeNode.endpoints[0]!.port), String(TTL_MS)],
    { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  try {
    const staleToken = BigInt((await lineFrom(child, 'token ')).split(' ')[1]!);
    child.kill('SIGSTOP');

    // While the first holder is stopped its lock expires, and a second holder takes over.
    const redlock = new Redlock(lockNodes.clients(), { ...patient, fencing: true, acquireTimeoutMs: 5 * TTL_MS });
    const [storeClient] = storeNode.clients();
    const store = new FencedStore(storeClient!, 'fenced:account:data');
    const current = await redlock.acquire('fenced:account', 10_000);
    expect(current.fencingToken! > staleToken).toBe(true);
    expect(await store.write(current.fencingToken!, 'from the current holder')).toBe(true);

    const result = lineFrom(child, 'written ');
    child.kill('SIGCONT');
    child.stdin?.write('go\n');
    const [, written, , remaining] = (await result).split(' ');
    expect(written).toBe('false');
    // The paused holder's own clock also says its lock was gone.
    expect(Number(remaining)).toBe(0);
    expect(await store.read()).toBe('from the current holder');
    await current.release();
  } finally {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
}, 30_000);
