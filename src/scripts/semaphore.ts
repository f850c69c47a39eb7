import { LuaScript } from './LuaScript.js';
import acquireSource from './semaphoreAcquire.lua';
import extendSource from './semaphoreExtend.lua';

export const semaphoreAcquireScript = new LuaScript('semaphoreAcquire', acquireSource);
export const semaphoreExtendScript = new LuaScript('semaphoreExtend', extendSource);

/** What a node answered to a semaphore acquire: taken, a slot held, or the limit it records when that is another. */
export type SemaphoreAcquireReply = { readonly taken: boolean; readonly recordedLimit?: number };

export function readSemaphoreAcquire(reply: unknown): SemaphoreAcquireReply {
  const code = Number(reply);
  return code < 0 ? { taken: false, recordedLimit: -code } : { taken: code === 1 };
}

