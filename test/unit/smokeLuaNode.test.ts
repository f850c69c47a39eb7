import assert from 'node:assert';
import { it } from 'vitest';
import { RedisLock, Redlock, RedisSemaphore, RedlockSemaphore, RedisReadWriteLock, ErrorCode, isQuorumLockError } from '../../src/index.js';
import { InMemoryNode } from '../../src/testing/index.js';

it('smoke', async () => {

  const node = new InMemoryNode('n1');
  const locker = new RedisLock(node);
  const lock = await locker.acquire('orders:42', 10_000);
  assert.equal(await locker.tryAcquire('orders:42', 10_000), null);
  assert.equal(node.get('orders:42'), lock.value);
  await lock.extend(20_000);
  assert.ok(node.pttl('orders:42') > 10_000);
  console.log('inspect', JSON.stringify(await locker.inspect('orders:42')));
  await lock.release();
  assert.equal(node.get('orders:42'), undefined);
  const multi = await locker.acquire(['a', 'b'], 5000);
  await multi.release();
  // fencing
  const fenced = new RedisLock(node, { fencing: true });
  const f1 = await fenced.acquire('f', 5000);
  console.log('token', f1.fencingToken);
  await f1.release();
  // wait line: second waiter gets it after release
  const first = await locker.acquire('w', 5000);
  const t0 = performance.now();
  const second = locker.acquire('w', 5000, { acquireTimeoutMs: 3000 });
  setTimeout(() => void first.release(), 50);
  const got = await second;
  console.log('waited', Math.round(performance.now() - t0), 'ms');
  await got.release();
  // redlock, 5 nodes, one down
  const nodes = [1, 2, 3, 4, 5].map((n) => new InMemoryNode(`n${n}`));
  nodes[0]!.restart({ downForMs: 60_000 });
  const redlock = new Redlock(nodes);
  const held = await redlock.acquire('cron', 30_000);
  await assert.rejects(redlock.acquire('cron', 30_000, { acquireTimeoutMs: 0 }), (e) => isQuorumLockError(e, ErrorCode.LOCK_HELD));
  await held.release();
  // semaphore
  const sem = new RedisSemaphore(new InMemoryNode('s1'), { limit: 2 });
  const p1 = await sem.acquire('x', 1000, { acquireTimeoutMs: 3000 });
  const p2 = await sem.acquire('x', 1000, { acquireTimeoutMs: 3000 });
  assert.equal(await sem.tryAcquire('x', 1000), null);
  await p1.release();
  const p3 = await sem.tryAcquire('x', 1000);
  assert.ok(p3);
  await p2.release(); await p3!.release();
  const rsem = new RedlockSemaphore([1,2,3].map((n) => new InMemoryNode(`rs${n}`)), { limit: 1 });
  const rp = await rsem.acquire('y', 1000);
  assert.equal(await rsem.tryAcquire('y', 1000), null);
  await rp.release();
  // rwlock
  const rw = new RedisReadWriteLock(new InMemoryNode('rw'));
  const r1 = await rw.read.acquire('doc', 2000);
  const r2 = await rw.read.acquire('doc', 2000);
  assert.equal(await rw.write.tryAcquire('doc', 2000), null);
  await r1.release(); await r2.release();
  const w = await rw.write.acquire('doc', 2000);
  assert.equal(await rw.read.tryAcquire('doc', 2000), null);
  await w.release();
  // using + await using
  assert.equal(await locker.using('u', 1000, async () => 7), 7);
  { await using l = await locker.acquire('au', 1000); assert.ok(l); }
  // reenter by value
  const outer = await locker.acquire('re', 5000);
  const again = await locker.reenter?.(['re'], outer.value).catch((e: unknown) => e);
  console.log('reenter', typeof again);
  await outer.release();
  console.log('ok');

}, 20000);
