export type { NodeBackend } from './NodeBackend.js';
export { RedisNodeBackend } from './RedisNodeBackend.js';
export type { RedisClient } from './assertClient.js';
export type { ClientAdapter } from './ClientAdapter.js';
export { LockNode, type ReleaseOutcome } from './LockNode.js';
export { type NodeOutcome, type NodeStatus, countStatus } from '../shared/outcome.js';
