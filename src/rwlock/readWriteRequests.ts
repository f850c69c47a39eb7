import { extendRequest, type FencedOutcome, fenceRequest, releaseRequest } from '../node/LockNode.js';
import type { PrimitiveRequests } from '../redlock/QuorumCoordinator.js';
import { plainOutcome, scriptRelease, scriptRequest } from '../redlock/scriptRequest.js';
import { fencingKeyFor } from '../scripts/fencingKey.js';
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

/** A writer's grant: its token with fencing, or true; false when it must wait. */
type WriteReply = readonly bigint[] | boolean;

function readWrite(reply: unknown): WriteReply {
  return Array.isArray(reply) ? reply.map((token) => BigInt(token as number | string)) : reply === 1;
}

/**
 * A writer's node requests. Its key is a mutex key: extend, release and the
 * write-back of fencing tokens are the mutex's, on that key alone.
 * `claimMs`: the lease of a waiting writer's claim, which holds new readers
 * back. With `fencing`, each grant carries the writer key's next token.
 */
export function writeRequests(claimMs: number, fencing: boolean): PrimitiveRequests {
  return {
    acquire: ([writer = '', readers = '', claim = ''], value, ttlMs) =>
      scriptRequest<WriteReply>(
        rwWriteScript,
        fencing ? [writer, readers, claim, fencingKeyFor(writer)] : [writer, readers, claim],
        fencing ? [value, ttlMs, claimMs, 'fence'] : [value, ttlMs, claimMs],
        {
          awaitsConnection: true,
          read: readWrite,
          interpret: (reply) => (reply === false ? 'held' : 'ok'),
          describe: (node, status, ms, reply, error): FencedOutcome =>
            Array.isArray(reply) ? { node, status, ms, tokens: reply } : plainOutcome(node, status, ms, error),
        },
      ),
    extend: ([writer = ''], value, ttlMs) => extendRequest([writer], value, ttlMs),
    release: ([writer = ''], value) => releaseRequest([writer], value, 'plain'),
    fence: ([writer = ''], value, tokens) => fenceRequest([writer], value, tokens),
  };
}
