export { RedisSemaphore } from './RedisSemaphore.js';
export { RedlockSemaphore } from './RedlockSemaphore.js';
export type { PermitOptions, SemaphoreAcquireOptions, SemaphoreOptions, SemaphoreTryAcquireOptions } from './options.js';
