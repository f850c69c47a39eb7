import { type FencedOutcome, type NodeRequest, type ReleaseOutcome, type RenewalsOutcome, renewalsRequest } from '../node/LockNode.js';
import type { LinePlace } from '../scripts/acquire.js';
import type { NodeBackend } from '../node/NodeBackend.js';
import { isOne, type LuaScript } from '../scripts/LuaScript.js';
import type { ScriptRenewal } from '../scripts/renewEach.js';
import type { NodeOutcome, NodeStatus } from '../shared/outcome.js';

/** A node's outcome with nothing but its status (and the error, for `error` and `timeout`). */
export function plainOutcome(node: string, status: NodeStatus, ms: number, error: Error | undefined): NodeOutcome {
  return error ? { node, status, ms, error } : { node, status, ms };
}

function runOn<T>(backend: NodeBackend, script: LuaScript, keys: readonly string[], args: readonly (string | number)[], read: (reply: unknown) => T): Promise<T> {
  if (!backend.runScript) return Promise.reject(new Error(`${backend.name} cannot run the ${script.name} script`));
  return backend.runScript(script, keys, args, read);
}

export interface ScriptRequestOptions<T> {
  readonly read: (reply: unknown) => T;
  readonly interpret: (reply: T) => NodeStatus;
  /** Acquires wait for a connecting node (NodeRequest.awaitsConnection). */
  readonly awaitsConnection?: boolean;
  /** The holder's value whose keys the script may write (NodeRequest.writes: an extend's). */
  readonly writes?: string;
  /** The outcome to report; default plainOutcome. */
  readonly describe?: (node: string, status: NodeStatus, ms: number, reply: T | undefined, error: Error | undefined) => NodeOutcome;
}

/** One of a primitive's scripts as a node request for the quorum engine (PrimitiveRequests). */
export function scriptRequest<T>(
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  options: ScriptRequestOptions<T>,
): NodeRequest<T, NodeOutcome> {
  const describe = options.describe ?? ((node, status, ms, _reply, error) => plainOutcome(node, status, ms, error));
  return {
    // Every request of one shape: spreading an optional part is V8's slow clone path (see releaseRequest).
    awaitsConnection: options.awaitsConnection ? true : undefined,
    writes: options.writes,
    send: (backend) => runOn(backend, script, keys, args, options.read),
    interpret: options.interpret,
    describe,
  };
}

/**
 * Many holders' renewals in one request per node: `each` (renewEachScript of
 * the primitive's extend script `single`) renews them all in one call per
 * chunk; a backend that cannot batch runs `single` once per holder. Each
 * holder's first argument is its value, as for scriptRelease.
 */
export function scriptRenewals(each: LuaScript, single: LuaScript, entries: readonly ScriptRenewal[]): NodeRequest<readonly boolean[], RenewalsOutcome> {
  return renewalsRequest(
    entries.map((entry) => String(entry.args[0])),
    (backend) =>
      backend.renewEach
        ? backend.renewEach(each, entries)
        : Promise.all(entries.map((entry) => runOn(backend, single, entry.keys, entry.args, isOne))),
  );
}

/** A primitive's release script, which answers how many of the holder's entries it removed; its first argument is the holder's value. */
export function scriptRelease(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): NodeRequest<number, ReleaseOutcome> {
  return {
    deletes: typeof args[0] === 'string' ? args[0] : undefined,
    send: (backend) => runOn(backend, script, keys, args, Number),
    interpret: (count) => (count > 0 ? 'ok' : 'held'),
    describe: (node, status, ms, count, error) => (error ? { node, status, ms, error, released: 0 } : { node, status, ms, released: count ?? 0 }),
  };
}

/** The arguments that make a primitive's acquire an attempt from the wait line: 'line', the place's lease, its ticket. */
export function placeArgs(place: LinePlace): (string | number)[] {
  return ['line', place.leaseMs, place.ticket];
}

/** A node that kept the waiter in line: where (its ticket) and, if it said, when (its server time in µs; see handoffGrant.ts). */
export function placeOutcome(node: string, status: NodeStatus, ms: number, ticket: number, serverUs: number | undefined): FencedOutcome {
  return serverUs === undefined ? { node, status, ms, ticket } : { node, status, ms, ticket, serverUs };
}
