import type { Cluster, Redis } from 'ioredis';
import type { createClient, createCluster, createSentinel } from 'redis';
import type { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis5';
import { describe, expectTypeOf, it } from 'vitest';
import type { LockClient, RedisClient } from '../../src/index.js';
import type { InMemoryNode } from '../../src/testing/index.js';

describe('the clients lockers take, by type', () => {
  it('takes ioredis Redis and Cluster', () => {
    expectTypeOf<Redis>().toExtend<RedisClient>();
    expectTypeOf<Cluster>().toExtend<RedisClient>();
  });

  it('takes node-redis 6 clients of every kind', () => {
    expectTypeOf<ReturnType<typeof createClient>>().toExtend<RedisClient>();
    expectTypeOf<ReturnType<typeof createCluster>>().toExtend<RedisClient>();
    expectTypeOf<ReturnType<typeof createSentinel>>().toExtend<RedisClient>();
  });

  it('takes node-redis 5 clients of every kind', () => {
    expectTypeOf<ReturnType<typeof createClient5>>().toExtend<RedisClient>();
    expectTypeOf<ReturnType<typeof createCluster5>>().toExtend<RedisClient>();
    expectTypeOf<ReturnType<typeof createSentinel5>>().toExtend<RedisClient>();
  });

  it('takes the in-memory node, and refuses what is no client', () => {
    expectTypeOf<InMemoryNode>().toExtend<LockClient>();
    expectTypeOf<{ get(key: string): Promise<string> }>().not.toExtend<LockClient>();
    expectTypeOf<string>().not.toExtend<LockClient>();
  });
});
