/**
 * The waits of this process that listen to one AbortSignal, told through a
 * single listener on it. A user who passes one signal to many waits at once
 * (a request's signal to all of its lock waits) added a listener per wait
 * before, and past ten Node printed "MaxListenersExceededWarning: Possible
 * EventTarget memory leak" though none leaked.
 */
interface Listening {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

const listening = new WeakMap<AbortSignal, Listening>();

/**
 * Calls `onAbort` once when `signal` aborts, unless the returned function
 * is called first, which forgets it. For a signal not aborted yet: an abort
 * already past is never told (callers check `signal.aborted` first). The
 * signal's one listener goes once no wait listens any more.
 */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let shared = listening.get(signal);
  if (!shared) {
    const callbacks = new Set<() => void>();
    const listener = (): void => {
      listening.delete(signal);
      for (const callback of [...callbacks]) {
        try {
          callback();
        } catch {
          // One wait's failure is its own: the others are still told.
        }
      }
    };
    shared = { callbacks, listener };
    listening.set(signal, shared);
    signal.addEventListener('abort', listener, { once: true });
  }
  const own = shared;
  // A function of its own per call, even for the same onAbort: each is forgotten on its own.
  const callback = (): void => onAbort();
  own.callbacks.add(callback);
  return () => {
    if (!own.callbacks.delete(callback) || own.callbacks.size > 0 || listening.get(signal) !== own) return;
    listening.delete(signal);
    signal.removeEventListener('abort', own.listener);
  };
}
