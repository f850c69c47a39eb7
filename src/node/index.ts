export type { NodeBackend } from './NodeBackend.js';
export { RedisNodeBackend, type RedisClient } from './RedisNodeBackend.js';
export { LockNode, type ReleaseOutcome } from './LockNode.js';
export { type NodeOutcome, type NodeStatus, countStatus } from '../shared/outcome.js';
