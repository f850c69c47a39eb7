/**
 * The simulated node of the property tests is the in-memory node users get
 * from quorumlock/testing (src/testing/InMemoryNode.ts): quorumlock's own Lua
 * scripts in an embedded VM, checked against real Redis by
 * test/property/luaNode.test.ts.
 */
import { WAITER_MARK } from '../../src/scripts/waiterMark.js';
import { LuaVm } from '../../src/testing/lua/LuaVm.js';

// Loaded before any test runs: fake timers would otherwise stand still while
// the nodes' first requests wait for the VM (real I/O).
await LuaVm.load();

import { InMemoryNode } from '../../src/testing/InMemoryNode.js';
import { PROJECT_SCRIPTS } from '../../src/testing/scriptOps.js';

export { InMemoryNode as SimulatedNode, InMemoryNodeError as SimulatedNodeError } from '../../src/testing/InMemoryNode.js';
export type { RequestFate, RequestPlan, RequestPlanner, RequestRecord, SimulatedRequest } from '../../src/testing/RequestPipe.js';
export type { SimulatedOperation } from '../../src/testing/scriptOps.js';

/** Whether `stored` is `value`, with or without a waiter's mark. */
export function holds(stored: string | undefined, value: string): stored is string {
  return stored === value || stored === value + WAITER_MARK;
}

/**
 * The node with quorumlock's scripts already loaded, as a server that has
 * served them before: the first request of each kind is then one EVALSHA,
 * not EVALSHA, NOSCRIPT and EVAL (a restart empties the cache again).
 */
export function withScriptsLoaded(node: InMemoryNode): InMemoryNode {
  for (const script of PROJECT_SCRIPTS) node.loadScript(script.source);
  return node;
}
