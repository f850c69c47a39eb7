import { monotonicClock } from '../clock/Clock.js';
import { LockNode, type ReleaseOutcome, releaseRequest } from '../node/LockNode.js';
import { RedisNodeBackend } from '../node/RedisNodeBackend.js';
import { NodeConnections } from './NodeConnections.js';
import { ExitCode } from './exitCodes.js';
import type { NodeAddress } from './nodeUrls.js';
import { nodeReport, type Reporter } from './Reporter.js';

export interface ReleaseRequest {
  readonly resource: string;
  readonly value: string;
  readonly nodes: readonly NodeAddress[];
  readonly timeoutMs: number;
}

/**
 * `quorumlock release`: the library's compare-and-delete on every node
 * (through LockNode, so each node gets its own timeout), for an operator
 * clearing a lock whose holder is gone. Another holder's key is never
 * deleted. Exits 0 when every node answered (even if none still held the
 * value), 69 when some node could not be asked: its key stays until its TTL.
 */
export async function release(request: ReleaseRequest, reporter: Reporter): Promise<number> {
  const connections = new NodeConnections(request.nodes, {
    connectTimeoutMs: request.timeoutMs,
    commandTimeoutMs: request.timeoutMs,
    connectionName: `quorumlock:release:${process.pid}`,
  });
  try {
    const outcomes = await connections.eachNode<ReleaseOutcome>(
      (client, node) =>
        new LockNode(new RedisNodeBackend(client, node), monotonicClock).ask(
          releaseRequest([request.resource], request.value),
          request.timeoutMs,
        ),
      (node, error) => ({ node, status: 'error', ms: 0, error, released: 0 }),
    );
    const released = outcomes.filter((outcome) => outcome.released > 0).length;
    const failed = outcomes.filter((outcome) => outcome.status === 'error' || outcome.status === 'timeout').length;
    const exitCode = failed === 0 ? ExitCode.OK : ExitCode.UNAVAILABLE;
    reporter.result(
      {
        resource: request.resource,
        released,
        nodeCount: outcomes.length,
        failed,
        exitCode,
        nodes: outcomes.map((outcome) => ({ ...nodeReport(outcome), released: outcome.released })),
      },
      describeRelease(request.resource, outcomes, released, failed),
    );
    return exitCode;
  } finally {
    connections.close();
  }
}

function describeRelease(resource: string, outcomes: readonly ReleaseOutcome[], released: number, failed: number): string {
  const summary = `${JSON.stringify(resource)}: released on ${released} of ${outcomes.length} node(s)${failed > 0 ? `, ${failed} could not be asked` : ''}`;
  const width = Math.max(...outcomes.map((outcome) => outcome.node.length));
  const lines = outcomes.map((outcome) => `  ${outcome.node.padEnd(width)}  ${describeOutcome(outcome)}`);
  return [summary, ...lines].join('\n');
}

function describeOutcome(outcome: ReleaseOutcome): string {
  switch (outcome.status) {
    case 'ok':
      return 'released';
    case 'held':
      return 'not held by this value (expired, released, or another holder)';
    default:
      return `${outcome.status}: ${outcome.error?.message ?? 'no reply'}`;
  }
}
