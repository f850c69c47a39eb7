/**
 * Test doubles for your own code's tests: {@link InMemoryNode} is a lock node
 * without a Redis server, on an injected clock, with planned faults. Pass it
 * where a client goes: `new RedisLock(node)`, `new Redlock([n1, n2, n3])`.
 *
 * @module quorumlock/testing
 */
export {
  InMemoryNode,
  InMemoryNodeError,
  type RequestFate,
  type RequestPlan,
  type RequestPlanner,
  type RequestRecord,
  type SimulatedOperation,
  type SimulatedRequest,
} from './InMemoryNode.js';
