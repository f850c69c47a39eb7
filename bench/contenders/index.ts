/** Every contender of a run, in the order the report lists them. */
import type { Library } from '../library.js';
import { quorumlockOnNodeRedis, redlockUniversalOnNodeRedis } from './nodeRedis.js';
import { nodeRedlockBest, nodeRedlockDefaults } from './nodeRedlock.js';
import { quorumlockContender } from './quorumlock.js';
import { raw, rawOnNodeRedis } from './raw.js';
import { redisSemaphoreBest, redisSemaphoreDefaults } from './redisSemaphore.js';
import { sesameRedlockBest, sesameRedlockDefaults } from './sesameRedlock.js';
import type { Contender } from './types.js';

/** `candidate`: another build of quorumlock to measure beside this one. */
export function allContenders(lib: Library, candidate?: { lib: Library; from: string }): Contender[] {
  return [
    raw,
    quorumlockContender(lib),
    ...(candidate === undefined ? [] : [quorumlockContender(candidate.lib, candidate.from)]),
    nodeRedlockDefaults,
    nodeRedlockBest,
    sesameRedlockDefaults,
    sesameRedlockBest,
    redisSemaphoreDefaults,
    redisSemaphoreBest,
    rawOnNodeRedis,
    quorumlockOnNodeRedis(lib),
    redlockUniversalOnNodeRedis,
  ];
}

export { contenderKey, type BenchLocker, type Contender, type HeldLock } from './types.js';
