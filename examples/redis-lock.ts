// RedisLock: a lock on one Redis server. Two workers compete for one order;
// the lock lets one of them in at a time, and a cron-style caller that finds
// the lock held skips its turn instead of waiting.
//
// It needs Redis at localhost:6379 (`redis-server --port 6379 --save ''`).
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx redis-lock.ts
//
// (In this repository: `npm run build && npx tsx examples/redis-lock.ts`.)
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, RedisLock } from 'quorumlock';

const redis = new Redis();
const locker = new RedisLock(redis);

// Two workers, one order: the critical sections never overlap.
let inside = 0;
const charges: string[] = [];
async function charge(worker: string): Promise<void> {
  await locker.using('orders:42', 10_000, async (signal) => {
    inside += 1;
    assert.equal(inside, 1, 'two workers inside the lock at once');
    await sleep(20, undefined, { signal }); // the "payment", cut short if the lock is lost
    charges.push(worker);
    inside -= 1;
  });
}
await Promise.all([charge('worker-a'), charge('worker-b')]);
assert.deepEqual(charges.sort(), ['worker-a', 'worker-b']);

// A lock held by hand, and a caller that gives up at once.
const nightly = await locker.acquire('cron:nightly', 60_000);
assert.equal(await locker.tryAcquire('cron:nightly', 60_000), null);
const busy = await locker.acquire('cron:nightly', 60_000, { acquireTimeoutMs: 0 }).catch((error: unknown) => error);
assert.ok(isQuorumLockError(busy, ErrorCode.LOCK_HELD), 'contention is LOCK_HELD');

// Extend resets the TTL; release deletes our key and never rejects.
await nightly.extend(120_000);
assert.ok(nightly.remainingMs() > 60_000);
const { released } = await nightly.release();
assert.equal(released, 1);
assert.equal(await redis.exists('cron:nightly'), 0);

console.log(`charged by ${charges.join(' then ')}; cron:nightly held, extended and released`);
await redis.quit();
