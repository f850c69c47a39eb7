import type { Redis } from 'ioredis';
import { quorumFor } from '../redlock/quorum.js';
import { holderValue, isMarked } from '../scripts/waiterMark.js';
import { NodeConnections } from './NodeConnections.js';
import { ExitCode } from './exitCodes.js';
import type { NodeAddress } from './nodeUrls.js';
import type { Reporter } from './Reporter.js';

/** One node's view of the resource key. */
export interface KeyState {
  readonly node: string;
  /** The holder's lock value (the stored value without a waiter's mark), or null when the key is absent. */
  readonly value?: string | null;
  /** True when a waiter marked the key: its release will be announced. */
  readonly waiterMarked?: boolean;
  /** PTTL: ms left, -2 when absent, -1 when the key has no expiry. */
  readonly pttlMs?: number;
  /** Set when the node could not be read. */
  readonly error?: string;
}

export interface StatusRequest {
  readonly resource: string;
  readonly nodes: readonly NodeAddress[];
  readonly timeoutMs: number;
}

/**
 * `quorumlock status`: reads the key on every node (GET and PTTL in one
 * MULTI, so both describe the same moment) and names the holder: the value
 * found on a quorum of nodes. Exits 0 when a quorum answered, 69 otherwise.
 */
export async function status(request: StatusRequest, reporter: Reporter): Promise<number> {
  const connections = new NodeConnections(request.nodes, {
    connectTimeoutMs: request.timeoutMs,
    commandTimeoutMs: request.timeoutMs,
    connectionName: `quorumlock:status:${process.pid}`,
  });
  try {
    const states = await connections.eachNode<KeyState>(
      (client, node) => readKey(client, node, request.resource),
      (node, error) => ({ node, error: error.message }),
    );
    const quorum = quorumFor(states.length);
    const answered = states.filter((state) => state.error === undefined).length;
    const holder = holderOf(states, quorum);
    const exitCode = answered >= quorum ? ExitCode.OK : ExitCode.UNAVAILABLE;
    reporter.result(
      { resource: request.resource, quorum, answered, held: holder !== null, holder, exitCode, nodes: states },
      describeStatus(request.resource, states, quorum, answered, holder),
    );
    return exitCode;
  } finally {
    connections.close();
  }
}

async function readKey(client: Redis, node: string, key: string): Promise<KeyState> {
  try {
    const replies = await client.multi().get(key).pttl(key).exec();
    const [get, pttl] = replies ?? [];
    const failed = get?.[0] ?? pttl?.[0] ?? (replies ? undefined : new Error('transaction aborted'));
    if (failed) return { node, error: failed.message };
    const stored = (get?.[1] as string | null) ?? null;
    if (stored === null) return { node, value: null, pttlMs: Number(pttl?.[1]) };
    return { node, value: holderValue(stored), waiterMarked: isMarked(stored), pttlMs: Number(pttl?.[1]) };
  } catch (error) {
    return { node, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The value held on at least a quorum of nodes, if any. */
function holderOf(states: readonly KeyState[], quorum: number): string | null {
  const counts = new Map<string, number>();
  for (const { value } of states) if (typeof value === 'string') counts.set(value, (counts.get(value) ?? 0) + 1);
  for (const [value, count] of counts) if (count >= quorum) return value;
  return null;
}

function describeStatus(
  resource: string,
  states: readonly KeyState[],
  quorum: number,
  answered: number,
  holder: string | null,
): string {
  const n = states.length;
  const heldOn = states.filter((state) => state.value === holder).length;
  const summary =
    answered < quorum
      ? `unknown: only ${answered} of ${n} node(s) answered, quorum is ${quorum}`
      : holder !== null
        ? `held by ${holder} on ${heldOn} of ${n} node(s), quorum is ${quorum}`
        : `not held (no value on a quorum of ${quorum} of ${n} node(s))`;
  const width = Math.max(...states.map((state) => state.node.length));
  const lines = states.map((state) => `  ${state.node.padEnd(width)}  ${describeState(state)}`);
  return [`${JSON.stringify(resource)}: ${summary}`, ...lines].join('\n');
}

function describeState(state: KeyState): string {
  if (state.error !== undefined) return `error: ${state.error}`;
  if (state.value === null || state.value === undefined) return 'free';
  const expiry = state.pttlMs === -1 ? 'no expiry (not set by quorumlock?)' : `expires in ${state.pttlMs} ms`;
  return `${state.value}  ${expiry}${state.waiterMarked ? ', a waiter is listening' : ''}`;
}
