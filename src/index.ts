/**
 * Redis distributed locks for Node.js: {@link RedisLock} on one node,
 * {@link Redlock} over N independent nodes, the counting semaphores
 * {@link RedisSemaphore} and {@link RedlockSemaphore}, the read-write locks
 * {@link RedisReadWriteLock} and {@link RedlockReadWriteLock}, with typed
 * errors ({@link ErrorCode}) and diagnostics channels ({@link diagnosticsChannels}).
 *
 * @module quorumlock
 */
export { RedisLock, type RedisLockOptions } from './single/index.js';
export { Redlock, type RedlockOptions } from './redlock/index.js';
export {
  RedisSemaphore,
  RedlockSemaphore,
  type PermitOptions,
  type SemaphoreAcquireOptions,
  type SemaphoreOptions,
  type SemaphoreTryAcquireOptions,
} from './semaphore/index.js';
export {
  RedisReadWriteLock,
  RedlockReadWriteLock,
  type ReadWriteLock,
  type ReadWriteLockOptions,
  type ReadWriteSide,
} from './rwlock/index.js';
export { Lock } from './lock/Lock.js';
export type { Locker, LockedRoutine } from './lock/Locker.js';
export type { CloseOptions, CloseSummary } from './lock/Closing.js';
export type { ReleaseNodeOutcome, ReleaseResult, SettledRelease } from './shared/grant.js';
export type { Resources } from './lock/validate.js';
export {
  DEFAULT_OPTIONS,
  DEFAULT_RETRY,
  type AcquireOptions,
  type LockerOptions,
  type ReplicaSyncOptions,
  type RetryOptions,
  type ResolvedOptions,
  type ResolvedRetry,
  type InspectOptions,
  type TryAcquireOptions,
  type UsingOptions,
} from './lock/options.js';
export {
  AbortedError,
  ErrorCode,
  InvalidArgumentError,
  isQuorumLockError,
  LimitMismatchError,
  LockExpiredError,
  LockHeldError,
  LockLostError,
  LockReleasedError,
  LockerClosedError,
  NodeConnectionError,
  NodeTimeoutError,
  OverlappingHoldError,
  QuorumLockError,
  type QuorumLockErrorFor,
  QuorumUnreachableError,
  ReplicaSyncError,
  UpgradeRefusedError,
  ValidityExhaustedError,
} from './shared/errors.js';
export type { NodeOutcome, NodeStatus } from './shared/outcome.js';
export type { InspectOutcome, ReleaseOutcome } from './node/LockNode.js';
export type { KeyState } from './scripts/inspect.js';
export type { Inspection, ResourceInspection, ResourceState } from './lock/inspection.js';
export type { RedisClient } from './node/assertClient.js';
export type { LockClient } from './node/backendFor.js';
export type { IoredisClient } from './node/adapters/ioredis.js';
export type { GlideClient } from './node/adapters/glide.js';
export type { NodeRedisClient } from './node/adapters/nodeRedis.js';
export type { Clock } from './clock/Clock.js';
export {
  type AcquireEvent,
  type ChannelName,
  channels as diagnosticsChannels,
  type EventError,
  type EventNodeOutcome,
  type ExtendEvent,
  type LostEvent,
  type ReleaseEvent,
  type ReleaseSettledEvent,
} from './diagnostics/index.js';
