export { type ScriptClient, LuaScript } from './LuaScript.js';
export { acquire, acquireFenced, acquireInLine, acquireScript, type LinePlace, type LineReply, type SetClient } from './acquire.js';
export { extend, extendScript } from './extend.js';
export { fence, fenceScript } from './fence.js';
export { fencingKeyFor } from './fencingKey.js';
export { keepalive, keepaliveScript, leave, leaveScript, type LineEntry, RESERVATION_MS } from './line.js';
export { companionKey, lineKeysFor } from './lineKeys.js';
export { type Announce, RELEASE_CHANNEL_PREFIX, type Rejoin, release, releaseScript } from './release.js';
export { holderValue, isMarked, WAITER_MARK } from './waiterMark.js';
