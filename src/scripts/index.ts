export { type ScriptClient, LuaScript } from './LuaScript.js';
export { acquire, acquireScript } from './acquire.js';
export { extend, extendScript } from './extend.js';
export { release, releaseScript } from './release.js';
