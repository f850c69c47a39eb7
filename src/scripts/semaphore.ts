import { lineScriptOnDemand, readPlace } from './line.js';
import acquireSource from './semaphoreAcquire.lua';
import extendSource from './semaphoreExtend.lua';
import releaseSource from './semaphoreRelease.lua';
import takeSource from './semaphoreTake.lua';
import recordSource from './semaphoreRecord.lua';
import { LuaScript } from './LuaScript.js';
import { renewEachScript } from './renewEach.js';

/** The scripts that take slots get semaphoreRecord.lua's helpers in front of their source. */
export const semaphoreAcquireScript = lineScriptOnDemand('semaphoreAcquire', [recordSource, acquireSource].join('\n'));
export const semaphoreExtendScript = new LuaScript('semaphoreExtend', extendSource);
/** Many holders' semaphoreExtend in one call (renewEach.lua): the renewals of a batch. */
export const semaphoreExtendEachScript = renewEachScript('semaphoreExtendEach', [], extendSource);
export const semaphoreReleaseScript = lineScriptOnDemand('semaphoreRelease', releaseSource);
/** A later try of an acquire: the node chooses the slots (its reservations, then free ones) from every slot in the caller's order. */
export const semaphoreTakeScript = lineScriptOnDemand('semaphoreTake', [recordSource, takeSource].join('\n'));

/**
 * What a node answered to a semaphore acquire (semaphoreAcquire.lua) or take
 * (semaphoreTake.lua): taken (with its limit record's TTL, and for a take
 * the slots chosen), a slot held (with the caller's place, in line mode;
 * `full` in probe mode, or from a take, when too few slots are free for any
 * other set), or the limit it records when that is another.
 */
export type SemaphoreAcquireReply = {
  readonly taken: boolean;
  /** Taken: how long the resource's limit record lives on, in ms (LiveLimitRecords). */
  readonly recordMs?: number;
  readonly recordedLimit?: number;
  readonly ticket?: number;
  readonly serverUs?: number;
  readonly full?: boolean;
  /** Taken by semaphoreTake.lua: the chosen slots' positions among the keys sent (2-based, KEYS order). */
  readonly chosen?: readonly number[];
};

const TAKEN = 1;
const FULL = 2;

export function readSemaphoreAcquire(reply: unknown): SemaphoreAcquireReply {
  if (Array.isArray(reply) && reply[0] === TAKEN) {
    if (reply.length === 2) return { taken: true, recordMs: Number(reply[1]) };
    return { taken: true, recordMs: Number(reply[1]), chosen: reply.slice(2).map(Number) };
  }
  const place = readPlace(reply);
  if (place) return { taken: false, ...place };
  const code = Number(reply);
  if (code === FULL) return { taken: false, full: true };
  return code < 0 ? { taken: false, recordedLimit: -code } : { taken: false };
}
