import { LimitMismatchError } from '../shared/errors.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import type { Clock } from '../clock/Clock.js';
import type { ResolvedOptions } from '../lock/options.js';
import type { NodeBackend } from '../node/NodeBackend.js';
import type { NodeRequest, ReleaseOutcome } from '../node/LockNode.js';
import { syncedTimeoutMs } from '../node/replicaSync.js';
import {
  placeArgs,
  placeOutcome,
  plainOutcome,
  scriptRelease,
  scriptRenewals,
  scriptRequest,
  type ScriptRequestOptions,
} from '../redlock/scriptRequest.js';
import type { NodeOutcome } from '../shared/outcome.js';
import type { LinePlace } from '../scripts/acquire.js';
import { lineAndLeaseFor } from '../scripts/lineKeys.js';
import { isOne } from '../scripts/LuaScript.js';
import {
  readSemaphoreAcquire,
  semaphoreAcquireScript,
  semaphoreExtendEachScript,
  semaphoreExtendScript,
  semaphoreReleaseScript,
  semaphoreTakeScript,
  type SemaphoreAcquireReply,
} from '../scripts/semaphore.js';
import { LiveLimitRecords } from './LiveLimitRecords.js';
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
 * An attempt's first try names its slots (a plain `SET NX` while the limit
 * record is known to live, see firstTry). On one node (`reservationMs` > 0),
 * every later try names every slot in one order and lets the node choose
 * (semaphoreTake.lua): one request however many slots are held; a release
 * hands each slot it frees to the line's next waiter as a reservation
 * (semaphoreRelease.lua), which that waiter's next try takes. On several
 * nodes (`reservationMs` 0) the later tries name their slots (the same on
 * every node, so the votes can agree), probing whether any other set is
 * free; a release wakes one waiter per slot it frees.
 */
export function semaphoreRequests(limit: number, settings: ResolvedOptions, reservationMs: number): PrimitiveRequests {
  const records = new LiveLimitRecords(settings.clock, settings);
  const answerMs = settings.syncReplicas ? syncedTimeoutMs(settings.nodeTimeoutMs, settings.syncReplicas) : settings.nodeTimeoutMs;
  const releaseScript = (keys: readonly string[], args: readonly (string | number)[]) =>
    scriptRelease(semaphoreReleaseScript, [...keys, ...lineAndLeaseFor(keys[0] ?? '')], args);
  const release = (keys: readonly string[], value: string, rejoin?: LinePlace) =>
    releaseScript(keys, rejoin ? [value, reservationMs, rejoin.ticket, rejoin.leaseMs] : [value, reservationMs]);
  return {
    acquire: (keys, value, ttlMs, place, probe, choose) => {
      const options: ScriptRequestOptions<SemaphoreAcquireReply> = {
        awaitsConnection: true,
        writes: value,
        read: readSemaphoreAcquire,
        interpret: (reply) => (reply.taken ? 'ok' : reply.recordedLimit === undefined ? 'held' : 'error'),
        describe: (node, status, ms, reply, error) => {
          if (reply?.chosen) return { node, status, ms, chosen: reply.chosen.map((position) => keys[position - 1] ?? '') };
          if (reply?.ticket !== undefined) return placeOutcome(node, status, ms, reply.ticket, reply.serverUs);
          if (reply?.full) return { node, status, ms, full: true };
          return reply?.recordedLimit === undefined
            ? plainOutcome(node, status, ms, error)
            : plainOutcome(node, status, ms, new LimitMismatchError(resourceOf(keys[0] ?? ''), limit, reply.recordedLimit, node));
        },
      };
      if (choose !== undefined) {
        // keys: the limit record, then every slot in the caller's order (semaphoreTake.lua).
        const args = [value, ttlMs, limit, choose];
        if (place) return scriptRequest(semaphoreTakeScript, [...keys, ...lineAndLeaseFor(keys[0] ?? '')], [...args, ...placeArgs(place)], options);
        return scriptRequest(semaphoreTakeScript, keys, args, options);
      }
      if (place) {
        return scriptRequest(
          semaphoreAcquireScript,
          [...keys, ...lineAndLeaseFor(keys[0] ?? ''), ...allSlots(keys[0] ?? '', limit)],
          [value, ttlMs, limit, ...placeArgs(place)],
          options,
        );
      }
      if (probe) return scriptRequest(semaphoreAcquireScript, [...keys, ...allSlots(keys[0] ?? '', limit)], [value, ttlMs, limit, 'probe'], options);
      const script = scriptRequest(semaphoreAcquireScript, keys, [value, ttlMs, limit], options);
      return firstTry(records, settings.clock, answerMs, script, keys, value, ttlMs, release);
    },
    extend: (keys, value, ttlMs) =>
      scriptRequest(semaphoreExtendScript, keys, [value, ttlMs, limit], { writes: value, read: isOne, interpret: (extended) => (extended ? 'ok' : 'held') }),
    renewMany: (renewals) =>
      scriptRenewals(
        semaphoreExtendEachScript,
        semaphoreExtendScript,
        renewals.map(({ keys, value, ttlMs }) => ({ keys, args: [value, ttlMs, limit] })),
      ),
    release,
    waitKeys: ([limitRecord = '']) => [limitRecord],
  };
}

const TAKEN: SemaphoreAcquireReply = { taken: true };
const HELD: SemaphoreAcquireReply = { taken: false };

/**
 * A plain attempt's first try (its first slot set): while the node's limit
 * record is known to outlive the slots it would take (LiveLimitRecords), and
 * the try is one permit, a bare `SET NX PX` of the slot, the mutex's acquire;
 * otherwise `script`, whose answer says how long the record lives on. A slot
 * whose answer came too late for the record to cover it is given back
 * (`release`: the permit's release request) and counts as held, and the
 * record is read again next time.
 */
function firstTry(
  records: LiveLimitRecords,
  clock: Clock,
  answerMs: number,
  script: NodeRequest<SemaphoreAcquireReply, NodeOutcome>,
  keys: readonly string[],
  value: string,
  ttlMs: number,
  release: (keys: readonly string[], value: string) => NodeRequest<number, NodeOutcome>,
): NodeRequest<SemaphoreAcquireReply, NodeOutcome> {
  const record = keys[0] ?? '';
  const slot = keys[1];
  return {
    awaitsConnection: script.awaitsConnection,
    writes: script.writes,
    send: (backend: NodeBackend) => {
      if (keys.length === 2 && slot !== undefined && records.outlives(backend, record, ttlMs, answerMs)) {
        return backend.acquire([slot], value, ttlMs).then((taken) => {
          if (!taken) return HELD;
          if (records.outlives(backend, record, ttlMs, 0)) return TAKEN;
          // Answered too late to count on the record: the slot goes back (a
          // held node's is not undone), waking whom it frees it for.
          records.forget(backend, record);
          return release(keys, value).send(backend).then(
            () => HELD,
            () => HELD,
          );
        });
      }
      const sentAt = clock.now();
      return script.send(backend).then((reply) => {
        if (reply.recordMs !== undefined) records.note(backend, record, sentAt, reply.recordMs);
        return reply;
      });
    },
    interpret: script.interpret,
    describe: script.describe,
  };
}
