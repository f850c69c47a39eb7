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
import { Mutex, RedlockMutex, RedlockSemaphore, Semaphore } from 'redis-semaphore';
import type { Library } from '../library.js';

export const HELD_LIBRARIES = ['quorumlock', 'node-redlock', 'redis-semaphore'] as const;
/**
 * Semaphore permits held instead of locks (`--library` names them; not run by
 * default): one permit of a semaphore of limit 2 per resource, under
 * quorumlock's semaphore using() and redis-semaphore's Semaphore /
 * RedlockSemaphore with its refresh timer.
 */
export const HELD_SEMAPHORES = ['quorumlock-semaphore', 'redis-semaphore-semaphore'] as const;
const SEMAPHORE_LIMIT = 2;
/** quorumlock built from another checkout (bench:held --candidate DIR), held the same way: its locks, and its permits beside quorumlock-semaphore. */
export const CANDIDATE = 'quorumlock-candidate';
export const CANDIDATE_SEMAPHORE = 'quorumlock-semaphore-candidate';
export type HeldLibrary = (typeof HELD_LIBRARIES)[number] | (typeof HELD_SEMAPHORES)[number] | typeof CANDIDATE | typeof CANDIDATE_SEMAPHORE;

/** Whether `library` holds semaphore permits rather than locks. */
export function holdsPermits(library: string): boolean {
  return (HELD_SEMAPHORES as readonly string[]).includes(library) || library === CANDIDATE_SEMAPHORE;
}

/**
 * The command a renewal of one holder runs once on a node, which the child
 * counts (commandstats, script internals included): SET ... PX for
 * node-redlock; PEXPIRE for the others (of the key, the permit slot, or
 * redis-semaphore's semaphore set; quorumlock's semaphore also SETs its limit
 * record every other renewal, which is not a holder's renewal).
 */
export function renewalCommand(library: string): string {
  return library === 'node-redlock' ? 'set' : 'pexpire';
}

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
    case 'quorumlock-semaphore':
    case CANDIDATE_SEMAPHORE: {
      const semaphore = single ? new lib.RedisSemaphore(single, { limit: SEMAPHORE_LIMIT }) : new lib.RedlockSemaphore(list, { limit: SEMAPHORE_LIMIT });
      return (key, ttlMs, stop, lost) =>
        hold((onHeld) =>
          semaphore.using(key, ttlMs, async (signal) => {
            onHeld();
            await stop;
            if (signal.aborted) lost();
          }),
        );
    }
    case 'redis-semaphore-semaphore':
      return (key, ttlMs, stop, lost) =>
        hold(async (onHeld) => {
          const options = { lockTimeout: ttlMs, onLockLost: () => lost() };
          const semaphore = single ? new Semaphore(single, key, SEMAPHORE_LIMIT, options) : new RedlockSemaphore(list, key, SEMAPHORE_LIMIT, options);
          await semaphore.acquire();
          onHeld();
          await stop;
          await semaphore.release();
        });
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
