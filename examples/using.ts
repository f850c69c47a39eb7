// using() and `await using`: two ways to scope a lock so it is always
// released. using() also keeps the lock extended while the routine runs and
// aborts its signal if the lock is lost; `await using` releases a lock taken
// with acquire() at the end of the block, even when the block throws.
//
// It needs Redis at localhost:6379 (`redis-server --port 6379 --save ''`).
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx using.ts
//
// (In this repository: `npm run build && npx tsx examples/using.ts`.)
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, RedisLock } from 'quorumlock';

const redis = new Redis();
const locker = new RedisLock(redis);

// 1. using(): a routine that outlives its 2 s TTL keeps the lock, renewed in the background.
const result = await locker.using('reports:weekly', 2_000, async (signal, lock) => {
  await sleep(4_500, undefined, { signal });
  assert.ok(lock.remainingMs() > 0, 'still valid after more than twice its TTL');
  return 'report sent';
});
assert.equal(result, 'report sent');
assert.equal(await redis.exists('reports:weekly'), 0, 'released after the routine');

// 2. using(): the routine's own error comes out as it is, after the release.
const failure = await locker
  .using('reports:weekly', 5_000, async () => {
    throw new Error('the mail server is down');
  })
  .catch((error: unknown) => error);
assert.ok(failure instanceof Error && failure.message === 'the mail server is down');
assert.equal(await redis.exists('reports:weekly'), 0);

// 3. using(): a lost lock aborts the signal. Here someone deletes our key, and
//    the next renewal finds it gone.
const lostReason = await locker.using('reports:weekly', 2_000, async (signal) => {
  await redis.del('reports:weekly');
  await sleep(10_000, undefined, { signal }).catch(() => undefined);
  return signal.reason as unknown;
});
assert.ok(isQuorumLockError(lostReason, ErrorCode.LOCK_LOST), 'the signal says the lock was lost');

// 4. `await using`: released at the end of the block, also when the block throws.
async function restock(fail: boolean): Promise<void> {
  await using lock = await locker.acquire('stock:sku-1', 5_000);
  assert.equal(await redis.exists('stock:sku-1'), 1);
  if (fail) throw new Error(`no stock moved under ${lock.resources.join(', ')}`);
}
await restock(false);
assert.equal(await redis.exists('stock:sku-1'), 0);
await assert.rejects(restock(true), /no stock moved under stock:sku-1/);
assert.equal(await redis.exists('stock:sku-1'), 0, 'released although the block threw');

console.log('using(): extended, released, errors kept, loss signalled; await using: released both ways');
await redis.quit();
