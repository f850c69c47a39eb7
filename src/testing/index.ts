export { type CommandReply, InMemoryNode, InMemoryNodeError } from './InMemoryNode.js';
export type { RequestFate, RequestPlan, RequestPlanner, RequestRecord, SimulatedRequest } from './RequestPipe.js';
export type { SimulatedOperation } from './scriptOps.js';
export type { StringChange } from './keyspace/Keyspace.js';
export type { ErrorReply, Reply, StatusReply } from './lua/replies.js';
