import { extendRequest, releaseRequest } from '../node/LockNode.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import { scriptRelease, scriptRequest } from '../redlock/scriptRequest.js';
import { isOne } from '../scripts/LuaScript.js';
import { rwReadExtendScript, rwReadReleaseScript, rwReadScript, rwWriteScript } from '../scripts/readWrite.js';

const okOrHeld = (granted: boolean) => (granted ? ('ok' as const) : ('held' as const));

/** A reader's node requests. Keys: writer, readers, claim (readWriteKeys). */
export const readRequests: PrimitiveRequests = {
  acquire: (keys, value, ttlMs) => scriptRequest(rwReadScript, keys, [value, ttlMs], { awaitsConnection: true, read: isOne, interpret: okOrHeld }),
  // Also a writer's downgrade: its key becomes its reader's lease (rwReadExtend.lua).
  extend: ([writer = '', readers = ''], value, ttlMs) => scriptRequest(rwReadExtendScript, [readers, writer], [value, ttlMs], { read: isOne, interpret: okOrHeld }),
  release: ([, readers = ''], value) => scriptRelease(rwReadReleaseScript, [readers], [value]),
};

/**
 * A writer's node requests. Its key is a mutex key: extend and release are
 * the mutex's, on that key alone. `claimMs`: the lease of a waiting writer's
 * claim, which holds new readers back.
 */
export function writeRequests(claimMs: number): PrimitiveRequests {
  return {
    acquire: (keys, value, ttlMs) => scriptRequest(rwWriteScript, keys, [value, ttlMs, claimMs], { awaitsConnection: true, read: isOne, interpret: okOrHeld }),
    extend: ([writer = ''], value, ttlMs) => extendRequest([writer], value, ttlMs),
    release: ([writer = ''], value) => releaseRequest([writer], value, 'plain'),
  };
}
