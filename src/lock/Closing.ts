import { InvalidArgumentError, LockerClosedError } from '../shared/errors.js';
import type { ReleaseResult, SettledRelease } from '../shared/grant.js';

/** How long close() waits for the releases and the nodes' answers. */
export interface CloseOptions {
  /**
   * Milliseconds after which close() resolves whatever is still out: a lock
   * whose release has not settled by then is counted in `leftToExpire`.
   * Each request is bounded by the node timeout anyway; this bounds the
   * whole, for a shutdown that must end by a deadline of its own.
   * @default 5000
   */
  readonly timeoutMs?: number;
}

/** The default of CloseOptions.timeoutMs. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

/**
 * What close() did. Every lock the locker held when it was called, or was
 * granted while it ran, is counted once, in `released`, `failed` or
 * `leftToExpire`.
 */
export interface CloseSummary {
  /** Locks whose keys are gone from every node: each answered that it deleted them or held none. */
  readonly released: number;
  /**
   * Locks whose release some node could not answer (an error, a timeout: a
   * node that is down). They are gone from the nodes that answered; on the
   * others, any key of theirs expires by its TTL.
   */
  readonly failed: number;
  /** Locks whose release had not settled when `timeoutMs` ran out: wherever it had not arrived yet, their keys expire by their TTL. */
  readonly leftToExpire: number;
  /** Acquires that were waiting or in flight, rejected with LockerClosedError. */
  readonly rejected: number;
  /** Whether `timeoutMs` ran out before everything had settled. */
  readonly timedOut: boolean;
}

/**
 * One close() of a locker: the reason its acquires and released locks see,
 * and the tally of what it is waiting for. Work joins it as it starts
 * (`track`, `trackRelease`); `done` resolves once `seal()` was called and
 * nothing is out, or when the timeout runs out.
 */
export class Closing {
  readonly reason = new LockerClosedError();
  readonly done: Promise<CloseSummary>;
  #released = 0;
  #failed = 0;
  #releasesOut = 0;
  #workOut = 0;
  #rejected = 0;
  #sealed = false;
  #finish: ((timedOut: boolean) => void) | undefined;

  constructor(options: CloseOptions | undefined) {
    const timeoutMs = closeTimeoutMs(options);
    this.done = new Promise<CloseSummary>((resolve) => {
      const timer = setTimeout(() => this.#finish?.(true), timeoutMs);
      timer.unref();
      this.#finish = (timedOut) => {
        this.#finish = undefined;
        clearTimeout(timer);
        resolve({
          released: this.#released,
          failed: this.#failed,
          leftToExpire: this.#releasesOut,
          rejected: this.#rejected,
          timedOut,
        });
      };
    });
  }

  /** An acquire rejected because of this close. */
  countRejected(): void {
    this.#rejected++;
  }

  /** A lock's release, counted once every node has answered (or timed out). */
  trackRelease(release: Promise<ReleaseResult>): void {
    this.#releasesOut++;
    void release
      .then((result) => result.settled)
      .then(
        (settled) => this.#counted(settled),
        () => this.#counted(undefined),
      );
  }

  /** Work (an acquire ending, a wait line left) that close() waits for before it resolves. */
  track(work: Promise<unknown>): void {
    this.#workOut++;
    const done = (): void => {
      this.#workOut--;
      this.#check();
    };
    work.then(done, done);
  }

  /** Nothing more joins except what the tracked work starts: resolve once it is all over. */
  seal(): void {
    this.#sealed = true;
    this.#check();
  }

  #counted(settled: SettledRelease | undefined): void {
    this.#releasesOut--;
    const failed = settled === undefined || settled.outcomes.some((outcome) => outcome.status === 'error' || outcome.status === 'timeout');
    if (failed) this.#failed++;
    else this.#released++;
    this.#check();
  }

  #check(): void {
    if (this.#sealed && this.#releasesOut === 0 && this.#workOut === 0) this.#finish?.(false);
  }
}

function closeTimeoutMs(options: CloseOptions | undefined): number {
  const timeoutMs = options?.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new InvalidArgumentError('options.timeoutMs', `expected a finite number of milliseconds >= 0, got ${String(timeoutMs)}`);
  }
  return timeoutMs;
}

/** Both sides' summaries of one close (a read-write lock's), as one. */
export function mergeSummaries(summaries: readonly CloseSummary[]): CloseSummary {
  return {
    released: summaries.reduce((sum, s) => sum + s.released, 0),
    failed: summaries.reduce((sum, s) => sum + s.failed, 0),
    leftToExpire: summaries.reduce((sum, s) => sum + s.leftToExpire, 0),
    rejected: summaries.reduce((sum, s) => sum + s.rejected, 0),
    timedOut: summaries.some((s) => s.timedOut),
  };
}
