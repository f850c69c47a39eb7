/**
 * The simulated node of the property tests is the in-memory node users get
 * from quorumlock/testing (src/testing/InMemoryNode.ts): one implementation,
 * checked against real Redis by test/property/simulatedNode.test.ts.
 */
export {
  holds,
  InMemoryNode as SimulatedNode,
  InMemoryNodeError as SimulatedNodeError,
  type RequestFate,
  type RequestPlan,
  type RequestPlanner,
  type RequestRecord,
  type SimulatedOperation,
  type SimulatedRequest,
} from '../../src/testing/InMemoryNode.js';
