import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { patient } from '../support/patient.js';

const TEST_CLIENT = process.env['QUORUMLOCK_TEST_CLIENT'] ?? 'ioredis';

let nodes: LocalNodeSet;
let client: Redis;
let observer: Redis;

beforeAll(async () => {
  nodes = await startNodes(1);
  [client] = nodes.clients() as [Redis];
  [observer] = nodes.clients() as [Redis];
  await Promise.all([client.ping(), observer.ping()]);
});

afterAll(async () => {
  await nodes.stopAll();
});

async function connectionCount(): Promise<number> {
  return (await observer.client('LIST') as string).trim().split('\n').length;
}

describe(`the suites' lockers run on ${TEST_CLIENT}`, () => {
  it('gets the test files the client swap exactly when QUORUMLOCK_TEST_CLIENT names another client', () => {
    expect('TEST_CLIENT' in api).toBe(TEST_CLIENT !== 'ioredis');
  });

  it('talks through a connection of its own on another client, through the test’s client on ioredis', async () => {
    const before = await connectionCount();
    const lock = await new api.RedisLock(client, patient).acquire('client-kind', 10_000);
    expect(await client.get('client-kind')).toBe(lock.value);
    expect(await connectionCount()).toBe(before + (TEST_CLIENT === 'ioredis' ? 0 : 1));
    await lock.release();
  });
});
