import { createLocker } from './locker.js';
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
 * `quorumlock status`: reads the key on every node through the library's
 * inspect() (GET and PTTL in one script, so both describe the same moment)
 * and names the holder: the value found on a quorum of nodes. Exits 0 when
 * a quorum answered, 69 otherwise.
 */
export async function status(request: StatusRequest, reporter: Reporter): Promise<number> {
  const connections = new NodeConnections(request.nodes, {
    connectTimeoutMs: request.timeoutMs,
    commandTimeoutMs: request.timeoutMs,
    connectionName: `quorumlock:status:${process.pid}`,
  });
  try {
    const connectErrors = await connections.ready();
    // A node that failed to connect is waited for no longer than the CLI's timeout.
    const locker = createLocker(connections.clients, { nodeTimeoutMs: request.timeoutMs, fencing: false, acquireTimeoutMs: request.timeoutMs });
    const inspection = await locker.inspect(request.resource);
    const states = inspection.nodes.map((outcome, index): KeyState => {
      const node = connections.addresses[index]?.label ?? outcome.node;
      const connectError = connectErrors[index];
      if (connectError) return { node, error: connectError.message };
      const key = outcome.keys?.[0];
      if (outcome.status !== 'ok' || key === undefined) return { node, error: outcome.error?.message ?? outcome.status };
      if (key.value === null) return { node, value: null, pttlMs: key.pttlMs };
      return { node, value: key.value, waiterMarked: key.waiterMarked, pttlMs: key.pttlMs };
    });
    const { quorum, answered } = inspection;
    const holder = inspection.resources[0]?.holder ?? null;
    const waiters = inspection.resources[0]?.waiters ?? 0;
    const exitCode = answered >= quorum ? ExitCode.OK : ExitCode.UNAVAILABLE;
    reporter.result(
      { resource: request.resource, quorum, answered, held: holder !== null, holder, waiters, exitCode, nodes: states },
      describeStatus(request.resource, states, quorum, answered, holder, waiters),
    );
    return exitCode;
  } finally {
    connections.close();
  }
}

function describeStatus(
  resource: string,
  states: readonly KeyState[],
  quorum: number,
  answered: number,
  holder: string | null,
  waiters: number,
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
  const line = waiters > 0 ? `; ${waiters} waiter(s) in line` : '';
  return [`${JSON.stringify(resource)}: ${summary}${line}`, ...lines].join('\n');
}

function describeState(state: KeyState): string {
  if (state.error !== undefined) return `error: ${state.error}`;
  if (state.value === null || state.value === undefined) return 'free';
  const expiry = state.pttlMs === -1 ? 'no expiry (not set by quorumlock?)' : `expires in ${state.pttlMs} ms`;
  return `${state.value}  ${expiry}${state.waiterMarked ? ', a waiter is listening' : ''}`;
}
