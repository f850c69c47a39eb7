// A counting semaphore: at most 3 "jobs" run at once, on one Redis server and
// then on five independent ones. Ten workers ask for a permit; the program
// counts how many hold one at the same moment and checks it never passes the
// limit, then shows the calls around it (tryAcquire, permits, a limit that
// does not match).
//
// It needs Redis on localhost: 6379 for the first part, 6379..6383 for the
// second, e.g. `redis-server --port 6379 --save ''` per port.
//
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx semaphore.ts
//
// In this repository, where 'quorumlock' resolves to the package itself
// through the "exports" of its package.json, that is to dist/:
//
//   npm run build && node --import tsx examples/semaphore.ts
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, RedisSemaphore, RedlockSemaphore } from 'quorumlock';

type Semaphore = RedisSemaphore | RedlockSemaphore;

const LIMIT = 3;
// A name of its own per run, so a run never meets the leases of the last one.
const resource = `example:semaphore:${process.pid}:${Date.now()}`;

/** Ten workers, each running a 20 ms job under a permit; returns the most that ran at once. */
async function runJobs(semaphore: Semaphore, name: string): Promise<number> {
  let running = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 10 }, (_, worker) =>
      semaphore.using(`${resource}:${name}`, 5_000, async (signal) => {
        running += 1;
        most = Math.max(most, running);
        await sleep(20, undefined, { signal });
        running -= 1;
        return worker;
      }),
    ),
  );
  return most;
}

/** The calls a holder makes by hand. */
async function byHand(semaphore: Semaphore, name: string, withLimit: (limit: number) => Semaphore): Promise<void> {
  const key = `${resource}:${name}:by-hand`;

  // Two permits at once, all or none: one of the three is left.
  const pair = await semaphore.acquire(key, 10_000, { permits: 2 });
  const third = await semaphore.tryAcquire(key, 10_000);
  assert.ok(third !== null, 'one permit of three is still free');
  // Full now: tryAcquire answers null instead of waiting.
  assert.equal(await semaphore.tryAcquire(key, 10_000), null);

  // A permit's handle is a lock's: validity, extend, signal, release.
  assert.ok(pair.remainingMs() > 9_000);
  await pair.extend(10_000);
  // release() resolves once the outcome is decided (a quorum); `settled` once every node answered.
  const released = await pair.release();
  const everyNode = await released.settled;
  assert.equal(everyNode.released, everyNode.nodes, 'released on every node');
  assert.equal(pair.signal.aborted, true);

  // Another limit for the same resource is refused while its holders live.
  const mismatched = withLimit(LIMIT + 1);
  try {
    await mismatched.tryAcquire(key, 10_000);
    assert.fail('a mismatched limit must be refused');
  } catch (error) {
    assert.ok(isQuorumLockError(error, ErrorCode.LIMIT_MISMATCH));
    assert.equal(error.expected, LIMIT + 1);
    assert.equal(error.found, LIMIT);
  }
  await third.release();
}

const redis = new Redis(6379);
const nodes = [6379, 6380, 6381, 6382, 6383].map((port) => new Redis(port));

try {
  const onOne = (limit: number) => new RedisSemaphore(redis, { limit });
  const mostOnOne = await runJobs(onOne(LIMIT), 'one-node');
  assert.ok(mostOnOne <= LIMIT, `at most ${LIMIT} at once, saw ${mostOnOne}`);
  await byHand(onOne(LIMIT), 'one-node', onOne);
  console.log(`1 node: 10 jobs, at most ${mostOnOne} at once (limit ${LIMIT})`);

  // Independent nodes, not replicas of each other: a permit needs 3 of the 5.
  const onFive = (limit: number) => new RedlockSemaphore(nodes, { limit });
  const mostOnFive = await runJobs(onFive(LIMIT), 'five-nodes');
  assert.ok(mostOnFive <= LIMIT, `at most ${LIMIT} at once, saw ${mostOnFive}`);
  await byHand(onFive(LIMIT), 'five-nodes', onFive);
  console.log(`5 nodes: 10 jobs, at most ${mostOnFive} at once (limit ${LIMIT})`);
} finally {
  // quit() waits for the requests still on their way; the process then exits by itself.
  await Promise.all([redis.quit(), ...nodes.map((node) => node.quit())]);
}
