import { lineScriptOnDemand, readPlace } from './line.js';
import acquireSource from './semaphoreAcquire.lua';
import extendSource from './semaphoreExtend.lua';
import releaseSource from './semaphoreRelease.lua';
import { LuaScript } from './LuaScript.js';
import { renewEachScript } from './renewEach.js';

export const semaphoreAcquireScript = lineScriptOnDemand('semaphoreAcquire', acquireSource);
export const semaphoreExtendScript = new LuaScript('semaphoreExtend', extendSource);
/** Many holders' semaphoreExtend in one call (renewEach.lua): the renewals of a batch. */
export const semaphoreExtendEachScript = renewEachScript('semaphoreExtendEach', [], extendSource);
export const semaphoreReleaseScript = lineScriptOnDemand('semaphoreRelease', releaseSource);

/**
 * What a node answered to a semaphore acquire: taken (with its limit
 * record's TTL), a slot held (with the caller's place, in line mode; `full`
 * in probe mode when too few slots are free for any other set), or the limit
 * it records when that is another.
 */
export type SemaphoreAcquireReply = {
  readonly taken: boolean;
  /** Taken: how long the resource's limit record lives on, in ms (LiveLimitRecords). */
  readonly recordMs?: number;
  readonly recordedLimit?: number;
  readonly ticket?: number;
  readonly serverUs?: number;
  readonly full?: boolean;
};

const TAKEN = 1;
const FULL = 2;

export function readSemaphoreAcquire(reply: unknown): SemaphoreAcquireReply {
  if (Array.isArray(reply) && reply[0] === TAKEN) return { taken: true, recordMs: Number(reply[1]) };
  const place = readPlace(reply);
  if (place) return { taken: false, ...place };
  const code = Number(reply);
  if (code === FULL) return { taken: false, full: true };
  return code < 0 ? { taken: false, recordedLimit: -code } : { taken: false };
}
