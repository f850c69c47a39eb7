/**
 * Test doubles for your own code's tests: {@link InMemoryNode} is a lock node
 * without a Redis server, on an injected clock, with planned faults. Pass it
 * where a client goes: `new RedisLock(node)`, `new Redlock([n1, n2, n3])`.
 *
 * @module quorumlock/testing
 */
export { type CommandReply, InMemoryNode, InMemoryNodeError } from './InMemoryNode.js';
export type { RequestFate, RequestPlan, RequestPlanner, RequestRecord, SimulatedRequest } from './RequestPipe.js';
export type { SimulatedOperation } from './scriptOps.js';
export type { StringChange } from './keyspace/Keyspace.js';
export type { ErrorReply, Reply, StatusReply } from './lua/replies.js';
