import { extendManyRequest, extendRequest, type FencedOutcome, fenceRequest } from '../node/LockNode.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import { placeArgs, placeOutcome, plainOutcome, scriptRelease, scriptRenewals, scriptRequest } from '../redlock/scriptRequest.js';
import { lineAndLeaseFor } from '../scripts/lineKeys.js';
import { fencingKeyFor } from '../scripts/fencingKey.js';
import { readPlace, RESERVATION_MS } from '../scripts/line.js';
import { isOne } from '../scripts/LuaScript.js';
import {
  rwReadExtendEachScript,
  rwReadExtendScript,
  rwReadReleaseScript,
  rwReadScript,
  rwWriteReleaseScript,
  rwWriteScript,
} from '../scripts/readWrite.js';
import type { NodeStatus } from '../shared/outcome.js';

const okOrHeld = (granted: boolean) => (granted ? ('ok' as const) : ('held' as const));

/** A waiter's place in line, when a node kept it waiting after an attempt from the line. */
type Place = { readonly ticket: number; readonly serverUs: number };

function describeWait<T>(granted: (reply: T) => boolean, placeOf: (reply: T) => Place | undefined) {
  return (node: string, status: NodeStatus, ms: number, reply: T | undefined, error: Error | undefined): FencedOutcome => {
    const place = reply === undefined || granted(reply) ? undefined : placeOf(reply);
    return place ? placeOutcome(node, status, ms, place.ticket, place.serverUs) : plainOutcome(node, status, ms, error);
  };
}

/** A reader's grant, or its place in the readers' line (false outside line mode). */
type ReadReply = Place | boolean;
const readRead = (reply: unknown): ReadReply => readPlace(reply) ?? reply === 1;
const readGranted = (reply: ReadReply) => reply === true;

/**
 * A reader's node requests. Keys: writer, readers, claim (readWriteKeys).
 * Waiting readers stand in the readers' line; a writer's release with no
 * writer's claim standing hands each of them a reservation, which a quorum
 * of makes its read lock (rwWriteRelease.lua); the next writer, woken with
 * them, claims the resource behind them, and the last reader's release
 * wakes it again (rwReadRelease.lua).
 */
export const readRequests: PrimitiveRequests = {
  acquire: (keys, value, ttlMs, place) =>
    scriptRequest(rwReadScript, place ? [...keys, ...lineAndLeaseFor(keys[1] ?? '')] : keys, place ? [value, ttlMs, ...placeArgs(place)] : [value, ttlMs], {
      awaitsConnection: true,
      read: readRead,
      interpret: (reply) => okOrHeld(readGranted(reply)),
      describe: describeWait(readGranted, (reply) => (typeof reply === 'object' ? reply : undefined)),
    }),
  // Also a writer's downgrade: its key becomes its reader's lease (rwReadExtend.lua).
  extend: ([writer = '', readers = ''], value, ttlMs) =>
    scriptRequest(rwReadExtendScript, [readers, writer], [value, ttlMs], { writes: value, read: isOne, interpret: okOrHeld }),
  renewMany: (renewals) =>
    scriptRenewals(
      rwReadExtendEachScript,
      rwReadExtendScript,
      renewals.map(({ keys: [writer = '', readers = ''], value, ttlMs }) => ({ keys: [readers, writer], args: [value, ttlMs] })),
    ),
  release: ([writer = '', readers = '', claim = ''], value) =>
    scriptRelease(rwReadReleaseScript, [readers, writer, claim, ...lineAndLeaseFor(writer)], [value]),
  waitKeys: ([, readers = '']) => [readers],
};

/** A writer's grant: its token with fencing, or true; false when it must wait (its place, in line mode). */
type WriteReply = readonly bigint[] | Place | boolean;

function readWrite(reply: unknown): WriteReply {
  const place = readPlace(reply);
  if (place) return place;
  return Array.isArray(reply) ? reply.map((token) => BigInt(token as number | string)) : reply === 1;
}

const writeGranted = (reply: WriteReply) => reply === true || Array.isArray(reply);

/**
 * A writer's node requests. Its key is a mutex key: extend and the
 * write-back of fencing tokens are the mutex's, on that key alone; its
 * release also wakes whoever may enter next (rwWriteRelease.lua).
 * `claimMs`: the lease of a waiting writer's claim, which holds new readers
 * back. With `fencing`, each grant carries the writer key's next token.
 * Waiting writers stand in the writers' line.
 */
export function writeRequests(claimMs: number, fencing: boolean): PrimitiveRequests {
  return {
    acquire: ([writer = '', readers = '', claim = ''], value, ttlMs, place) => {
      const keys = fencing ? [writer, readers, claim, fencingKeyFor(writer)] : [writer, readers, claim];
      const args: (string | number)[] = fencing ? [value, ttlMs, claimMs, 'fence'] : [value, ttlMs, claimMs];
      if (place) {
        keys.push(...lineAndLeaseFor(writer));
        if (!fencing) args.push('');
        args.push(...placeArgs(place));
      }
      return scriptRequest<WriteReply>(rwWriteScript, keys, args, {
        awaitsConnection: true,
        read: readWrite,
        interpret: (reply) => okOrHeld(writeGranted(reply)),
        describe: (node, status, ms, reply, error): FencedOutcome =>
          Array.isArray(reply)
            ? { node, status, ms, tokens: reply as bigint[] }
            : describeWait(writeGranted, (r: WriteReply) => (typeof r === 'object' ? (r as Place) : undefined))(node, status, ms, reply, error),
      });
    },
    extend: ([writer = ''], value, ttlMs) => extendRequest([writer], value, ttlMs),
    renewMany: (renewals) => extendManyRequest(renewals.map(({ keys: [writer = ''], value, ttlMs }) => ({ keys: [writer], value, ttlMs }))),
    release: ([writer = '', readers = '', claim = ''], value) =>
      scriptRelease(rwWriteReleaseScript, [writer, readers, claim, ...lineAndLeaseFor(writer), ...lineAndLeaseFor(readers)], [value, RESERVATION_MS]),
    fence: ([writer = ''], value, tokens) => fenceRequest([writer], value, tokens),
    waitKeys: ([writer = '']) => [writer],
  };
}
