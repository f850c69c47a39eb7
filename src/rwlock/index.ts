export { RedisReadWriteLock } from './RedisReadWriteLock.js';
export { RedlockReadWriteLock } from './RedlockReadWriteLock.js';
export type { ReadWriteLock } from './ReadWriteLock.js';
export type { ReadWriteSide } from './ReadWriteSide.js';
export type { ReadWriteLockOptions } from './options.js';
