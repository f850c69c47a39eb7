// A worker that holds a lock while it runs a long job, and shuts down
// cleanly on SIGTERM (what a deploy sends): it closes its locker before its
// client quits, so the next replica of the service takes the lock at once
// instead of waiting out the TTL. The routine still running sees its signal
// abort with LockerClosedError and stops; an acquire still waiting rejects
// with it. (To show it, this program sends itself SIGTERM once the job runs.)
//
// It needs Redis: pass its URL (default redis://127.0.0.1:6379), e.g.
// `redis-server --port 6379 --save ''` in another terminal.
//
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx shutdown.ts [redis-url]
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, RedisLock } from 'quorumlock';

const redis = new Redis(process.argv[2] ?? 'redis://127.0.0.1:6379');
const locker = new RedisLock(redis);

// On SIGTERM: close the locker first (it releases every lock it holds on
// every node, and turns its waiting acquires away), then quit the client,
// which is yours: close() leaves it open.
const stopped = new Promise<void>((resolve) => {
  process.once('SIGTERM', () => {
    void (async () => {
      const summary = await locker.close({ timeoutMs: 5_000 });
      console.log(`released ${summary.released}, failed ${summary.failed}, left to expire ${summary.leftToExpire}, turned away ${summary.rejected}`);
      // `failed`: a node did not answer the release in time; its key there expires by its TTL.
      assert.equal(summary.released + summary.failed, 1);
      assert.equal(summary.rejected, 1);
      await redis.quit();
      resolve();
    })();
  });
});

let steps = 0;
let started!: () => void;
const running = new Promise<void>((resolve) => (started = resolve));
const job = locker.using('jobs:nightly-report', 10_000, async (signal) => {
  started();
  // A routine still running when close() releases its lock is not stopped
  // for you: its signal aborts, with LockerClosedError as the reason. The
  // lock is gone by then, so it must stop before its next write.
  while (!signal.aborted) {
    steps++;
    await sleep(20);
  }
  assert.ok(isQuorumLockError(signal.reason, ErrorCode.LOCKER_CLOSED));
  return 'stopped at the shutdown';
});

// Another acquire of the same resource waits behind the job; close() rejects it.
const waiting = locker.acquire('jobs:nightly-report', 10_000, { acquireTimeoutMs: 60_000 }).then(
  () => 'granted',
  (error: unknown) => (isQuorumLockError(error, ErrorCode.LOCKER_CLOSED) ? 'turned away' : `failed: ${String(error)}`),
);

await running;
await sleep(200);
process.kill(process.pid, 'SIGTERM');

assert.equal(await job, 'stopped at the shutdown');
assert.equal(await waiting, 'turned away');
await stopped;
assert.ok(steps > 0);
console.log(`the job ran ${steps} steps and stopped; the lock is free for the next replica`);
