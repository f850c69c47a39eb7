import { AbortedError, ErrorCode, isQuorumLockError, LockerClosedError, QuorumUnreachableError } from '../shared/errors.js';
import type { Lock } from '../lock/Lock.js';
import type { LockedRoutine, Locker } from '../lock/Locker.js';
import { NodeConnections } from './NodeConnections.js';
import { ExitCode, signalExitStatus } from './exitCodes.js';
import { CliFailure, toFailure } from './failure.js';
import { createLocker, type LockMode } from './locker.js';
import type { NodeAddress } from './nodeUrls.js';
import { type OnLost, runCommand } from './runCommand.js';
import { SignalRelay } from './SignalRelay.js';
import type { CommandSpec } from './spawnCommand.js';

export interface ExecRequest {
  readonly resource: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly nodes: readonly NodeAddress[];
  readonly ttlMs: number;
  /** 0: one attempt; Infinity: until the lock is ours or a signal arrives. */
  readonly waitMs: number;
  readonly fencing: boolean;
  /** --sync-replicas: replicas of each node that must confirm a grant. */
  readonly syncReplicas?: number | undefined;
  /** --limit, --shared, --exclusive; default the mutex. */
  readonly mode?: LockMode;
  readonly onLost: OnLost;
  readonly graceMs: number;
  readonly nodeTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Set when this exec runs inside another exec's command on the same resource. */
  readonly enclosing?: EnclosingLock;
}

/** The lock of an exec this one runs inside, as its command's environment tells it. */
export interface EnclosingLock {
  readonly value: string;
  /** The enclosing exec's token, with its --fencing. */
  readonly fencingToken: string | undefined;
}

/** What the command finds in its environment. */
export const ENV = Object.freeze({
  RESOURCE: 'QUORUMLOCK_RESOURCE',
  LOCK_VALUE: 'QUORUMLOCK_LOCK_VALUE',
  VALIDITY_MS: 'QUORUMLOCK_VALIDITY_MS',
  FENCING_TOKEN: 'QUORUMLOCK_FENCING_TOKEN',
});

/**
 * The lock of the exec whose command started this one, when it locked the
 * same resource: its environment names the resource and the lock's value.
 */
export function enclosingLock(resource: string, env: NodeJS.ProcessEnv): EnclosingLock | undefined {
  const value = env[ENV.LOCK_VALUE];
  if (env[ENV.RESOURCE] !== resource || value === undefined || value === '') return undefined;
  return { value, fencingToken: env[ENV.FENCING_TOKEN] };
}

/**
 * `quorumlock exec`: takes the lock with the library's using() (which keeps it
 * extended and releases it afterwards), runs the command inside, and resolves
 * to the command's exit status. Rejects with a CliFailure otherwise.
 */
export async function exec(request: ExecRequest): Promise<number> {
  const relay = new SignalRelay();
  const connections = new NodeConnections(request.nodes, {
    connectTimeoutMs: request.connectTimeoutMs,
    connectionName: `quorumlock:exec:${process.pid}`,
  });
  let connectErrors: readonly (Error | undefined)[] = [];
  let held: Lock | undefined;
  let locker: Locker | undefined;
  try {
    const chosen = createLocker(connections.clients, {
      nodeTimeoutMs: request.nodeTimeoutMs,
      fencing: request.fencing,
      syncReplicas: request.syncReplicas,
      ...(request.mode === undefined ? {} : { mode: request.mode }),
    });
    locker = chosen;
    // A signal before the command runs closes the locker: the wait ends, and its places in the nodes' wait lines
    // are left before this process exits, so the next process in line is not held up by them.
    relay.onInterrupt(() => void chosen.close());
    connectErrors = await connections.ready();
    const run: LockedRoutine<number> = (signal, lock) => {
      held = lock;
      return runCommand(commandSpec(request, lock), signal, request, relay);
    };
    if (request.enclosing) return await insideEnclosing(chosen, request, request.enclosing, run, relay.signal);
    return await chosen.using(request.resource, request.ttlMs, run, { signal: relay.signal, acquireTimeoutMs: request.waitMs });
  } catch (error) {
    const signal = relay.received;
    if (signal && (error instanceof AbortedError || error instanceof LockerClosedError)) {
      throw new CliFailure('interrupted', signalExitStatus(signal), `interrupted by ${signal} while waiting for the lock`);
    }
    if (error instanceof QuorumUnreachableError) throw withConnectErrors(error, connections.addresses, connectErrors);
    throw error;
  } finally {
    relay.dispose();
    // Releases on every node whatever is still held (and waits for a wait
    // line left); using() returns once a quorum released, and disconnecting
    // now would drop the release still on its way to the slower nodes,
    // leaving their keys to the TTL. Each request is bounded by the node timeout.
    await locker?.close();
    if (held) await (await held.release()).settled;
    connections.close();
  }
}

/**
 * Runs the command at once under the enclosing exec's lock, re-entered by its
 * value (checked on a quorum), instead of waiting for that lock until --wait
 * gives up. The lock is extended while the command runs, as the enclosing
 * exec does too, and left held at exit: it is the enclosing exec's to release.
 */
async function insideEnclosing(
  locker: Locker,
  request: ExecRequest,
  enclosing: EnclosingLock,
  run: LockedRoutine<number>,
  signal: AbortSignal,
): Promise<number> {
  let lock: Lock;
  try {
    lock = await locker.reenter(request.resource, enclosing.value);
  } catch (error) {
    if (!isQuorumLockError(error, ErrorCode.LOCK_LOST)) throw error;
    const failure = toFailure(error);
    const message = `${ENV.LOCK_VALUE} of the enclosing exec no longer holds "${request.resource}": ${failure.message}`;
    throw new CliFailure(failure.kind, failure.exitCode, message, failure.details);
  }
  try {
    return await lock.scope(() => locker.using(request.resource, request.ttlMs, run, { signal }));
  } finally {
    // Gives back this process's hold; asks no node.
    await lock.release();
  }
}

/**
 * A node that refused the connection shows up in the library's outcome as a
 * retry-limit or timeout error; the connection error says what to fix.
 */
function withConnectErrors(
  error: QuorumUnreachableError,
  addresses: readonly NodeAddress[],
  connectErrors: readonly (Error | undefined)[],
): CliFailure {
  const failure = toFailure(error);
  const causes = addresses.flatMap((address, i) => {
    const cause = connectErrors[i];
    return cause ? [`${address.label}: ${cause.message}`] : [];
  });
  if (causes.length === 0) return failure;
  return new CliFailure(failure.kind, failure.exitCode, `${failure.message} (could not connect: ${causes.join('; ')})`, failure.details);
}

function commandSpec(request: ExecRequest, lock: Lock): CommandSpec {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    [ENV.RESOURCE]: request.resource,
    [ENV.LOCK_VALUE]: lock.value,
    [ENV.VALIDITY_MS]: String(Math.floor(lock.remainingMs())),
  };
  // A token inherited from an outer quorumlock is not this lock's token,
  // unless this exec re-entered that very lock.
  delete env[ENV.FENCING_TOKEN];
  if (request.fencing) env[ENV.FENCING_TOKEN] = fencingTokenOf(request, lock);
  return { command: request.command, args: request.args, env };
}

function fencingTokenOf(request: ExecRequest, lock: Lock): string {
  if (request.enclosing) {
    const token = request.enclosing.fencingToken;
    if (token === undefined) {
      throw new CliFailure(
        'usage',
        ExitCode.USAGE,
        `Invalid --fencing: the enclosing exec of "${request.resource}" passed no ${ENV.FENCING_TOKEN}; give it --fencing too`,
        { argument: '--fencing' },
      );
    }
    return token;
  }
  const token = lock.fencingToken;
  if (token === undefined) {
    throw new CliFailure('internal', ExitCode.INTERNAL, 'internal error: the library granted the lock without a fencing token');
  }
  return token.toString();
}
