export { type ScriptClient, LuaScript } from './LuaScript.js';
export { acquire, acquireFenced, acquireScript, type SetClient } from './acquire.js';
export { extend, extendScript } from './extend.js';
export { fence, fenceScript } from './fence.js';
export { fencingKeyFor } from './fencingKey.js';
export { type Announce, RELEASE_CHANNEL_PREFIX, release, releaseScript } from './release.js';
export { verify, verifyScript } from './verify.js';
export { holderValue, isMarked, WAITER_MARK } from './waiterMark.js';
