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
