/**
 * When to give up on a contender: when the timeout runs out, or sooner when
 * its pace so far says it would need over HOPELESS_FACTOR × the timeout. The
 * Redlock-style peers manage 0-25 of 512 sections in 10-20 s on 3 and 5
 * nodes; waiting out the full timeout for each of them would be most of the
 * run and tell nothing more, while a lock that is merely slow (40 cs/s: 13 s
 * for 512) keeps its whole timeout.
 */
import { raceLimit } from './limit.js';
import { PROGRESS_MS } from './protocol.js';

/** Before this, too few sections may be done to judge a pace by. */
const HOPELESS_AFTER_MS = 3_000;
const HOPELESS_FACTOR = 4;

export interface Stopped {
  /** A few words for the table, e.g. `did not finish in 20 s`. */
  readonly status: string;
  /** Why then, when it was not the timeout, for the notes. */
  readonly why: string;
}

/**
 * `everyone`'s value if it comes in time, else why to stop. `sectionsDone`
 * reads the children's latest progress.
 */
export async function watchPace<T>(
  everyone: Promise<T>,
  sectionsDone: () => number,
  wanted: number,
  timeoutMs: number,
): Promise<{ readonly done: T } | { readonly stopped: Stopped }> {
  const started = performance.now();
  for (;;) {
    const elapsedMs = performance.now() - started;
    if (elapsedMs >= timeoutMs) return { stopped: { status: `did not finish in ${timeoutMs / 1000} s`, why: '' } };
    const done = await raceLimit(
      everyone.then((value) => ({ value })),
      Math.min(PROGRESS_MS, timeoutMs - elapsedMs),
    );
    if (done !== undefined) return { done: done.value };
    const nowMs = performance.now() - started;
    if (nowMs < HOPELESS_AFTER_MS) continue;
    const sections = sectionsDone();
    const projectedMs = sections === 0 ? Number.POSITIVE_INFINITY : (nowMs / sections) * wanted;
    if (projectedMs > HOPELESS_FACTOR * timeoutMs) {
      const pace = Number.isFinite(projectedMs) ? `~${Math.round(projectedMs / 1000)} s` : 'forever';
      return {
        stopped: {
          status: `did not finish: stopped at ${(nowMs / 1000).toFixed(0)} s, pace ${pace}`,
          why: ` (all ${wanted} at that pace: over ${HOPELESS_FACTOR}× the ${timeoutMs / 1000} s timeout)`,
        },
      };
    }
  }
}
