/**
 * The two lockers that tests run the same behaviour on: RedisLock on the
 * first node, Redlock on the first three. Both get `patient` node timeouts
 * unless the test's options say otherwise.
 */
import type { Redis } from 'ioredis';
import { type LockerOptions, RedisLock, Redlock } from '../../src/index.js';
import { patient } from './patient.js';

export interface LockerKind {
  readonly name: string;
  /** How many nodes the locker uses: the first ones of the clients given. */
  readonly nodeCount: number;
  make(clients: readonly Redis[], options?: LockerOptions): RedisLock | Redlock;
}

export const LOCKER_KINDS: readonly LockerKind[] = [
  {
    name: 'RedisLock on 1 node',
    nodeCount: 1,
    make: (clients, options) => new RedisLock(clients[0] as Redis, { ...patient, ...options }),
  },
  {
    name: 'Redlock on 3 nodes',
    nodeCount: 3,
    make: (clients, options) => new Redlock(clients.slice(0, 3), { ...patient, ...options }),
  },
];
