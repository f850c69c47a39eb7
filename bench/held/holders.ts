/**
 * How each library keeps a lock held for as long as a routine runs, the way
 * its README shows: quorumlock's using(), node-redlock's using() (extends
 * 500 ms before expiry), redis-semaphore's Mutex / RedlockMutex with its
 * refresh timer (every 0.8 × lockTimeout). Each hold resolves once the lock
 * is held and ends when `stop` resolves; `lost` is called if the library
 * says the lock was lost meanwhile.
 */
import type { Redis } from 'ioredis';
import Redlock from 'redlock';
import { Mutex, RedlockMutex } from 'redis-semaphore';
import type { Library } from '../library.js';

export const HELD_LIBRARIES = ['quorumlock', 'node-redlock', 'redis-semaphore'] as const;
/** quorumlock built from another checkout (bench:held --candidate DIR), held the same way. */
export const CANDIDATE = 'quorumlock-candidate';
export type HeldLibrary = (typeof HELD_LIBRARIES)[number] | typeof CANDIDATE;

export interface Hold {
  /** Resolves once the lock is held; rejects if it could not be taken. */
  readonly held: Promise<void>;
  /** Resolves once the lock is released (after `stop` resolved): with the error of a failed release, if any. */
  readonly done: Promise<unknown>;
}

export type Holder = (key: string, ttlMs: number, stop: Promise<void>, lost: () => void) => Hold;

/** `lib`: quorumlock's build (this checkout's, or the candidate's), for the quorumlock holders. */
export function makeHolder(library: HeldLibrary, clients: readonly Redis[], lib: Library): Holder {
  const list = [...clients];
  const single = list.length === 1 ? list[0] : undefined;
  switch (library) {
    case 'quorumlock':
    case CANDIDATE: {
      const locker = single ? new lib.RedisLock(single) : new lib.Redlock(list);
      return (key, ttlMs, stop, lost) =>
        hold((onHeld) =>
          locker.using(key, ttlMs, async (signal) => {
            onHeld();
            await stop;
            // Checked before the release, which aborts the signal too.
            if (signal.aborted) lost();
          }),
        );
    }
    case 'node-redlock': {
      const redlock = new Redlock(list);
      redlock.on('error', () => undefined);
      return (key, ttlMs, stop, lost) =>
        hold((onHeld) =>
          redlock.using([key], ttlMs, async (signal) => {
            onHeld();
            await stop;
            if (signal.aborted) lost();
          }),
        );
    }
    case 'redis-semaphore':
      return (key, ttlMs, stop, lost) =>
        hold(async (onHeld) => {
          const options = { lockTimeout: ttlMs, onLockLost: () => lost() };
          const mutex = single ? new Mutex(single, key, options) : new RedlockMutex(list, key, options);
          await mutex.acquire();
          onHeld();
          await stop;
          await mutex.release();
        });
  }
}

function hold(run: (onHeld: () => void) => Promise<unknown>): Hold {
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const running = run(onHeld);
  // A hold whose acquire failed rejects `held` too, instead of leaving it pending.
  return { held: Promise.race([held, running.then(() => undefined)]), done: running.then(() => undefined, (error: unknown) => error) };
}
