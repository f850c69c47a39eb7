export { RedisLock, type RedisLockOptions } from './RedisLock.js';
