import { LimitMismatchError } from '../shared/errors.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import { placeArgs, placeOutcome, plainOutcome, scriptRelease, scriptRenewals, scriptRequest } from '../redlock/scriptRequest.js';
import { lineAndLeaseFor } from '../scripts/lineKeys.js';
import { isOne } from '../scripts/LuaScript.js';
import {
  readSemaphoreAcquire,
  semaphoreAcquireScript,
  semaphoreExtendEachScript,
  semaphoreExtendScript,
  semaphoreReleaseScript,
} from '../scripts/semaphore.js';
import { resourceOf, slotKey } from './permitKeys.js';

/** Every permit slot of the resource whose limit record is `limitRecord`. */
function allSlots(limitRecord: string, limit: number): string[] {
  const resource = resourceOf(limitRecord);
  return Array.from({ length: limit }, (_, slot) => slotKey(resource, slot));
}

/**
 * The semaphore's node requests for the quorum engine. Keys: the limit
 * record, then the permit slots (permitKeys.ts). A node that records another
 * limit answers with an error outcome whose error is LimitMismatchError.
 * A plain attempt's later tries probe: a node answers whether too few slots
 * are free for any other try, so the attempt stops there. Waiters stand in
 * the limit record's wait line once too few slots are free;
 * a release wakes one of them per slot it frees (semaphoreRelease.lua), and
 * leaves the limit record.
 */
export function semaphoreRequests(limit: number): PrimitiveRequests {
  return {
    acquire: (keys, value, ttlMs, place, probe) =>
      scriptRequest(
        semaphoreAcquireScript,
        place
          ? [...keys, ...lineAndLeaseFor(keys[0] ?? ''), ...allSlots(keys[0] ?? '', limit)]
          : probe
            ? [...keys, ...allSlots(keys[0] ?? '', limit)]
            : keys,
        place ? [value, ttlMs, limit, ...placeArgs(place)] : probe ? [value, ttlMs, limit, 'probe'] : [value, ttlMs, limit],
        {
          awaitsConnection: true,
          read: readSemaphoreAcquire,
          interpret: (reply) => (reply.taken ? 'ok' : reply.recordedLimit === undefined ? 'held' : 'error'),
          describe: (node, status, ms, reply, error) => {
            if (reply?.ticket !== undefined) return placeOutcome(node, status, ms, reply.ticket, reply.serverUs);
            if (reply?.full) return { node, status, ms, full: true };
            return reply?.recordedLimit === undefined
              ? plainOutcome(node, status, ms, error)
              : plainOutcome(node, status, ms, new LimitMismatchError(resourceOf(keys[0] ?? ''), limit, reply.recordedLimit, node));
          },
        },
      ),
    extend: (keys, value, ttlMs) =>
      scriptRequest(semaphoreExtendScript, keys, [value, ttlMs, limit], { writes: value, read: isOne, interpret: (extended) => (extended ? 'ok' : 'held') }),
    renewMany: (renewals) =>
      scriptRenewals(
        semaphoreExtendEachScript,
        semaphoreExtendScript,
        renewals.map(({ keys, value, ttlMs }) => ({ keys, args: [value, ttlMs, limit] })),
      ),
    release: (keys, value) => scriptRelease(semaphoreReleaseScript, [...keys, ...lineAndLeaseFor(keys[0] ?? '')], [value]),
    waitKeys: ([limitRecord = '']) => [limitRecord],
  };
}
