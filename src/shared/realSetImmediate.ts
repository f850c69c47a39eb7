/**
 * The setImmediate of the process as loaded, not one a test's fake timers put
 * in its place later: what the library runs in the check phase (answers to
 * real I/O, a deadline's expiry after the replies already read, a passed
 * lock's release) is never held back by fake time.
 */
export const realSetImmediate: typeof setImmediate = globalThis.setImmediate;
