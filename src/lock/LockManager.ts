import type { Clock } from '../clock/Clock.js';
import { validEnoughToPass, validUntil } from '../clock/validity.js';
import { type AcquireEvent, channels, publish, type ReleaseEvent } from '../diagnostics/channels.js';
import { observeGrant, observeRelease } from '../diagnostics/observe.js';
import { AbortedError, LockHeldError } from '../shared/errors.js';
import { type CloseOptions, type CloseSummary, Closing } from './Closing.js';
import { HeldLocks } from './HeldLocks.js';
import { AcquireSignal } from './AcquireSignal.js';
import type { Grant, ReleaseResult, SettledRelease, WritesOut } from '../shared/grant.js';
import type { LockOperations } from './LockOperations.js';
import { Lock } from './Lock.js';
import type { LockedRoutine, Locker } from './Locker.js';
import {
  type AcquireOptions,
  DEFAULT_OPTIONS,
  type ResolvedAcquire,
  type ResolvedOptions,
  resolveAcquireOptions,
  resolveTryAcquireOptions,
  type InspectOptions,
  type TryAcquireOptions,
  type UsingOptions,
} from './options.js';
import type { ConnectWait } from '../node/RequestDeadline.js';
import { randomValue } from '../shared/randomValue.js';
import { ContendedWait, type WaitHooks } from '../wakeup/ContendedWait.js';
import type { LinePosition } from '../wakeup/LinePosition.js';
import type { ReleaseWatch } from '../wakeup/ReleaseWatch.js';
import { Line, type LineSpace, lineKey, type LocalHandover } from '../wakeup/WaitLine.js';
import type { HandedReservation } from '../wakeup/handoffGrant.js';
import { holdWhile, stopExtending } from './reentry/holdWhile.js';
import { NOTHING_RELEASED } from './reentry/nothingReleased.js';
import { reenterHeld } from './reentry/reenter.js';
import { retryAcquire } from './retry.js';
import { type Renewal, type RenewalAnswer, RenewalBatch } from './RenewalBatch.js';
import { assertFunction, assertLockValue, assertTtl, normalizeResources, type Resources } from './validate.js';
import type { Inspection } from './inspection.js';

/**
 * The Locker calls shared by RedisLock and Redlock: validation, retries,
 * using() and the Lock handle. Subclasses supply only the node operations,
 * which is where one node and a quorum differ.
 */
export abstract class LockManager implements Locker {
  protected readonly settings: ResolvedOptions;
  readonly #ops: LockOperations;
  readonly #waitHooks: WaitHooks = {
    openWatch: (keys) => this.releaseWatch(keys),
    keepPlace: (keys, value, position) => this.keepPlace(keys, value, position),
    localLine: (keys) => (this.waitsInLocalLine ? lineKey(keys) : undefined),
    lineFallbackMs: (maxDelayMs) => this.lineFallbackMs(maxDelayMs),
  };
  /** For locks re-entered by their value: their release leaves the keys to the process that acquired them. */
  readonly #borrowedOps: LockOperations;
  readonly #renewals = new RenewalBatch((renewals) => this.renewOnNodes(renewals));
  /** What acquire() does without options, resolved once. */
  readonly #defaultPolicy: ResolvedAcquire;
  /** Aborts when close() is called: every acquire's wait listens to it. */
  readonly #closeController = new AbortController();
  /** The locks of this locker not yet released, lost or expired: what close() releases. */
  readonly #held = new HeldLocks();
  /** Acquires (and tryAcquires) under way. */
  #acquiring = 0;
  /** Told when the last acquire under way has ended, once close() waits for them. */
  #acquiresOver: (() => void) | undefined;
  #closing: Closing | undefined;
  /**
   * With passesToWaiting: this locker's acquires that wait, by waitingKey of
   * their keys, in arrival order; a releasing holder passes its lock to the
   * first that takes it.
   */
  readonly #waiting = new Map<string, Set<ContendedWait>>();
  /** With passesToWaiting: how many more times each held lock may pass inside this process (see Line.passesLeft). */
  readonly #passesLeft = new WeakMap<Lock, number>();

  protected constructor(settings: ResolvedOptions) {
    this.settings = settings;
    this.#defaultPolicy = Object.freeze(resolveAcquireOptions(undefined, settings));
    this.#ops = {
      owner: this,
      clock: settings.clock,
      extend: (keys, value, ttlMs, remainingMs) => this.#observedExtend(keys, value, ttlMs, remainingMs),
      renew: (keys, value, ttlMs, remainingMs, answer) => this.#observedRenew(keys, value, ttlMs, remainingMs, answer),
      release: (keys, value, contended, writesOut) => this.#observedRelease(keys, value, contended, writesOut),
      passOn: (lock) => this.#passOn(lock),
      ended: (lock) => {
        this.#held.delete(lock);
      },
      validUntilAfterExtend: (ttlMs, startedAt) => validUntil(ttlMs, startedAt, settings),
    };
    this.#borrowedOps = { ...this.#ops, release: () => NOTHING_RELEASED, passOn: () => undefined };
  }

  /**
   * Whether this process's waiters for the same keys stand in one line, so
   * that only the first asks the nodes and a holder passes the lock to the
   * next: true where one holder at a time is all the keys allow.
   */
  protected get waitsInLocalLine(): boolean {
    return true;
  }

  /**
   * How long a waiter in the Redis lines waits for its turn to be announced
   * before it tries anyway: the longest backoff delay, which bounds what a
   * lost announcement or a dead waiter ahead costs.
   */
  protected lineFallbackMs(maxDelayMs: number): number {
    return maxDelayMs;
  }

  /**
   * Whether a holder whose waiters do not line up locally (waitsInLocalLine
   * false) passes its lock to a waiter of this process that asked for the
   * same keys: where holders are interchangeable (a semaphore's permits).
   */
  protected get passesToWaiting(): boolean {
    return false;
  }

  /**
   * With passesToWaiting: how many acquires of this process may wait for the
   * same keys before a new one waits for a pass instead of trying the nodes
   * first. Holders are interchangeable up to the semaphore's limit: with
   * fewer waiting than that, a slot may be free, and waiting for a pass
   * would hold the semaphore below its limit.
   */
  protected get triesBeforePassWait(): number {
    return 1;
  }

  /** What acquires that may take one another's lock share: a semaphore's limit record and permit count. */
  #waitingKey(keys: readonly string[]): string {
    return `${keys.length}\u0000${keys[0] ?? ''}`;
  }

  /** The monotonic clock that lock validity is counted on. */
  get clock(): Clock {
    return this.settings.clock;
  }

  /**
   * One attempt on the nodes. Rejects with LockHeldError, QuorumUnreachableError
   * or ValidityExhaustedError. With `position` the caller waits in the nodes'
   * wait lines: the attempt keeps its place there, and updates `position`.
   */
  protected abstract acquireOnNodes(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant>;
  /** Rejects with LockLostError, QuorumUnreachableError or ValidityExhaustedError. */
  protected abstract extendOnNodes(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant>;
  /**
   * Extends every lock of the batch as extendOnNodes would, sending one
   * request per node for all of them; answers each renewal on its own.
   */
  protected abstract renewOnNodes(renewals: readonly Renewal[]): void;
  /** Never rejects: node failures are reported in the result. */
  protected abstract releaseOnNodes(keys: readonly string[], value: string, contended?: boolean, writesOut?: WritesOut): Promise<ReleaseResult>;
  /**
   * Checks that a quorum holds every key with `value`. Rejects with
   * LockLostError, QuorumUnreachableError or LockExpiredError.
   */
  /** Reads every node's state of `keys`; never rejects for an outage. */
  protected abstract inspectOnNodes(keys: readonly string[], connectWait: ConnectWait): Promise<Inspection>;
  protected abstract verifyOnNodes(keys: readonly string[], value: string, connectWait: ConnectWait): Promise<Grant>;
  /** Throws InvalidArgumentError when the nodes cannot lock these keys together. */
  protected abstract checkKeys(keys: readonly string[]): void;
  /** The wait lines of this process's waiters on these nodes. */
  protected abstract readonly lineSpace: LineSpace;
  /** How many nodes a lock is taken on. */
  protected abstract readonly nodeCount: number;
  /** Listens for releases of `keys` on the nodes. */
  protected abstract releaseWatch(keys: readonly string[]): ReleaseWatch;
  /** Keeps a waiter's places in the nodes' wait lines until the returned function is called. */
  protected abstract keepPlace(keys: readonly string[], value: string, position: LinePosition): () => void;
  /**
   * The lock a quorum of nodes handed this waiter at a release, for the
   * reservation (`handed`, valid until `validUntil`; see handoffGrant.ts), and
   * its claim of the full TTL, which follows in the next tick: Grant.claim.
   */
  protected abstract handedOffGrant(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition,
    handed: HandedReservation,
    validUntil: number,
  ): Promise<Grant>;
  /**
   * A waiter handed the keys takes them with its TTL and leaves the lines;
   * validity as for an extend. Never undoes anything: a lock it fails to
   * claim keeps the reservation's validity. Rejects like extendOnNodes.
   */
  protected abstract claimOnNodes(keys: readonly string[], value: string, ttlMs: number, position: LinePosition): Promise<Grant>;
  /**
   * Whether a handoff announced to a waiter may be taken as the lock itself
   * (see handoffGrant.ts): one resource (each key is handed on its own), no
   * fencing (each holder needs a token of its own) and no replica sync (a
   * reservation was not waited for).
   */
  protected takesHandoffs(keys: readonly string[]): boolean {
    return keys.length === 1 && !this.settings.fencing && this.settings.syncReplicas === undefined;
  }
  /**
   * The acquire of `value` is over; `kept` are the keys its lock holds with
   * that value (undefined: none). Writes of earlier attempts that were given
   * up on, on keys the lock does not hold, are released after they settle.
   * True when such a write was on the lock's own keys: the lock must then
   * end with a release.
   */
  protected abstract endAttempts(value: string, kept: readonly string[] | undefined): boolean;
  /**
   * Best effort, never rejects: steps out of the wait lines (see
   * NodeBackend.leave); resolves once every node asked has answered or
   * timed out.
   */
  protected abstract leaveLines(keys: readonly string[], value: string, position: LinePosition, acquired: boolean): Promise<void>;
  /** After close(): lets the connections this locker opened and nobody uses any more go now, not after their linger. */
  protected abstract releaseIdleConnections(): void;

  async acquire(resources: Resources, ttlMs: number, options?: AcquireOptions): Promise<Lock> {
    const keys = this.#validate(resources, ttlMs);
    if (this.#closing) throw this.#closing.reason;
    const policy = options === undefined ? this.#defaultPolicy : resolveAcquireOptions(options, this.settings);
    const reentered = this.#reenterHeld(keys, ttlMs, policy.signal);
    if (reentered) return reentered;
    // close() aborts the acquire's waits too.
    const abort = new AcquireSignal(policy.signal, this.#closeController.signal);
    // One async frame per acquire, as before close() needed the count and the
    // close signal: a second one cost ~10% of 64 concurrent lock cycles' throughput.
    this.#acquiring++;
    const value = randomValue();
    const clock = this.settings.clock;
    const deadline = clock.now() + policy.acquireTimeoutMs;
    const connectWait = new AcquireConnectWait(policy.acquireTimeoutMs > 0 ? deadline : clock.now() + connectWaitMs(this.settings.acquireTimeoutMs), abort);
    let wait: ContendedWait | undefined;
    let waiting: Set<ContendedWait> | undefined;
    let attempt = 0;
    let acquired = false;
    let passed: LocalHandover | undefined;
    let kept: Lock | undefined;
    try {
      wait = this.settings.wakeUp
        ? new ContendedWait(this.lineSpace, keys, value, deadline, clock, abort, this.#waitHooks, this, ttlMs)
        : undefined;
      waiting = wait && this.passesToWaiting ? this.#waitIn(keys, wait) : undefined;
      // Behind a local holder, the release will be announced: wait for it up to
      // the longest backoff rather than a short jittered guess that fails.
      const queued = wait?.queueBehindOthers(policy.retry);
      if (queued) await queued;
      // Others of this process already wait for the same keys: a holder of ours may pass us its lock first.
      if (waiting && wait && waiting.size > this.triesBeforePassWait) await wait.waitForPass(Math.min(policy.retry.maxDelayMs, deadline - clock.now()));
      const takesHandoffs = wait !== undefined && this.takesHandoffs(keys);
      const attemptOnce = (): Promise<Grant> => {
        attempt++;
        passed = wait?.takeHandover();
        if (passed) return Promise.resolve(this.#passedGrant(keys, ttlMs, attempt, passed));
        const handed = takesHandoffs && wait ? this.#takeHandoff(keys, value, ttlMs, attempt, wait) : undefined;
        if (handed) return handed;
        wait?.beforeAttempt();
        return this.#observedAcquire(keys, value, ttlMs, attempt, wait?.position, connectWait);
      };
      if (abort.aborted) throw new AbortedError(abort.reason);
      let grant: Grant;
      try {
        grant = await attemptOnce();
      } catch (error) {
        grant = await retryAcquire(error, attemptOnce, { ...policy, signal: abort.signal }, clock, deadline, wait);
      }
      // A close() meanwhile is #handOver's to answer: the lock is released with the others.
      const handed = this.#handOver(keys, passed?.value ?? value, grant, abort.own);
      const lock = handed instanceof Lock ? handed : await handed;
      acquired = true;
      // A lock from the nodes may pass to the waiters of this process already waiting for it, once each.
      if (waiting) this.#passesLeft.set(lock, passed?.passesLeft ?? waiting.size - 1);
      if (lock.value === value) kept = lock;
      return lock;
    } catch (error) {
      throw this.#rejection(error);
    } finally {
      if (this.endAttempts(value, kept?.resources)) kept?.mayOutliveValidity();
      if (waiting && wait) this.#stopWaiting(keys, waiting, wait);
      wait?.close(acquired, passed !== undefined);
      // A lock passed to us after we gave up is not dropped: its keys go.
      const unclaimed = wait?.takeHandover();
      if (unclaimed) {
        unclaimed.claim?.send();
        const released = this.#observedRelease(unclaimed.keys ?? keys, unclaimed.value);
        this.#closingNow()?.trackRelease(released);
      }
      const position = wait?.linePosition;
      if (position?.inLine) {
        const leaving = this.leaveLines(keys, value, position, acquired);
        // A closing locker answers once its waiters are out of the lines: the next process is not held up by them.
        if (this.#closingNow()) await leaving;
      }
      abort.forget();
      this.#acquireEnded();
    }
  }

  async tryAcquire(resources: Resources, ttlMs: number, options?: TryAcquireOptions): Promise<Lock | null> {
    const keys = this.#validate(resources, ttlMs);
    if (this.#closing) throw this.#closing.reason;
    const own = resolveTryAcquireOptions(options);
    const reentered = this.#reenterHeld(keys, ttlMs, own);
    if (reentered) return reentered;
    const abort = new AcquireSignal(own, this.#closeController.signal);
    this.#acquiring++;
    try {
      return await this.#tryAcquire(keys, ttlMs, abort);
    } catch (error) {
      throw this.#rejection(error);
    } finally {
      abort.forget();
      this.#acquireEnded();
    }
  }

  async #tryAcquire(keys: readonly string[], ttlMs: number, abort: AcquireSignal): Promise<Lock | null> {
    if (abort.aborted) throw new AbortedError(abort.reason);
    const value = randomValue();
    let grant: Grant;
    try {
      const connectWait = new AcquireConnectWait(this.settings.clock.now() + connectWaitMs(this.settings.acquireTimeoutMs), abort);
      grant = await this.#observedAcquire(keys, value, ttlMs, 1, undefined, connectWait);
    } catch (error) {
      this.endAttempts(value, undefined);
      if (error instanceof LockHeldError) return null;
      if (abort.aborted) throw new AbortedError(abort.reason);
      throw error;
    }
    const lock = this.#handOver(keys, value, grant, abort.own);
    // A semaphore's one attempt may have tried other permit slots before these.
    if (this.endAttempts(value, grant.keys ?? keys) && lock instanceof Lock) lock.mayOutliveValidity();
    return lock;
  }

  async using<T>(resources: Resources, ttlMs: number, routine: LockedRoutine<T>, options?: UsingOptions): Promise<T> {
    assertFunction(routine, 'routine');
    const lock = await this.acquire(resources, ttlMs, options);
    return holdWhile(lock, routine, this.settings);
  }

  async reenter(resources: Resources, value: string): Promise<Lock> {
    const keys = normalizeResources(resources);
    assertLockValue(value);
    this.checkKeys(keys);
    if (this.#closing) throw this.#closing.reason;
    const connectWait = { until: this.settings.clock.now() + connectWaitMs(this.settings.acquireTimeoutMs), signal: undefined };
    const grant = await this.verifyOnNodes(keys, value, connectWait);
    // Not held by this locker: close() leaves it to the process that acquired it.
    return new Lock(this.#borrowedOps, keys, value, grant);
  }

  /**
   * Shuts the locker down, for a process about to stop: from now on its
   * acquires reject at once with LockerClosedError; acquires still waiting
   * reject with it too, and leave the wait lines on every node; renewals
   * stop; every lock it holds (under using() or by hand, and any granted
   * while this runs) is released on every node, its signal aborted with
   * that LockerClosedError. Resolves once all of that has settled, or when
   * `timeoutMs` runs out, with what it did; never rejects for a node that
   * is down. Calling it again returns the same promise. The clients stay
   * open: they are the caller's, to quit once this has resolved.
   */
  close(options?: CloseOptions): Promise<CloseSummary> {
    if (this.#closing) return this.#closing.done;
    let closing: Closing;
    try {
      closing = new Closing(options);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#closing = closing;
    // First: a waiter told of a release from here on refuses the pass, and no wait sleeps on.
    this.#closeController.abort(closing.reason);
    for (const lock of this.#held.all()) {
      stopExtending(lock);
      closing.trackRelease(lock.releaseForClose(closing.reason));
    }
    if (this.#acquiring > 0) {
      closing.track(
        new Promise<void>((resolve) => {
          this.#acquiresOver = resolve;
        }).then(() => this.releaseIdleConnections()),
      );
    } else {
      this.releaseIdleConnections();
    }
    closing.seal();
    return closing.done;
  }

  /** `await using locker = new Redlock(…)` closes it when the block ends (see close()). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async inspect(resources: Resources, options?: InspectOptions): Promise<Inspection> {
    const keys = normalizeResources(resources);
    const signal = resolveTryAcquireOptions(options);
    signal?.throwIfAborted();
    return this.inspectOnNodes(keys, { until: this.settings.clock.now() + connectWaitMs(this.settings.acquireTimeoutMs), signal });
  }

  /**
   * A handle of this locker for keys the nodes already hold with `value`
   * under another primitive's terms, taken over by this locker's extend (a
   * writer downgraded to a reader): validity as for an extend.
   */
  protected async takeOver(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Lock> {
    const grant = await this.#observedExtend(keys, value, ttlMs, remainingMs);
    return this.#adopt(new Lock(this.#ops, keys, value, grant));
  }

  /** Counts `lock` as held by this locker, or, once closing, releases it as close() does. */
  #adopt(lock: Lock): Lock {
    const closing = this.#closing;
    if (!closing) {
      this.#held.add(lock);
      return lock;
    }
    closing.trackRelease(lock.releaseForClose(closing.reason));
    throw closing.reason;
  }

  /** close() may have begun while an acquire awaited (read through a call: the acquire checked it at its start). */
  #closingNow(): Closing | undefined {
    return this.#closing;
  }

  /** What an acquire that failed rejects with: LockerClosedError when close() ended it. */
  #rejection(error: unknown): unknown {
    const closing = this.#closing;
    if (!closing || (error !== closing.reason && !(error instanceof AbortedError && error.cause === closing.reason))) return error;
    closing.countRejected();
    return closing.reason;
  }

  #acquireEnded(): void {
    if (--this.#acquiring > 0 || !this.#acquiresOver) return;
    const over = this.#acquiresOver;
    this.#acquiresOver = undefined;
    over();
  }

  /** A further hold when the caller's context already holds the keys through this locker (see reentry/). */
  #reenterHeld(keys: readonly string[], ttlMs: number, signal: AbortSignal | undefined): Lock | Promise<Lock> | undefined {
    return this.settings.reentrant ? reenterHeld(this.#ops, keys, ttlMs, signal, this.settings) : undefined;
  }

  #observedAcquire(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    attempt: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    if (!channels.acquire.hasSubscribers) return this.acquireOnNodes(keys, value, ttlMs, position, connectWait);
    return observeGrant('acquire', this.settings.clock, { resources: keys, ttlMs, attempt }, () =>
      this.acquireOnNodes(keys, value, ttlMs, position, connectWait),
    );
  }

  #observedExtend(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant> {
    if (!channels.extend.hasSubscribers) return this.extendOnNodes(keys, value, ttlMs, remainingMs);
    return observeGrant('extend', this.settings.clock, { resources: keys, ttlMs }, () =>
      this.extendOnNodes(keys, value, ttlMs, remainingMs),
    );
  }

  #observedRenew(keys: readonly string[], value: string, ttlMs: number, remainingMs: number, answer: RenewalAnswer): void {
    if (!channels.extend.hasSubscribers) {
      this.#renewals.add(keys, value, ttlMs, remainingMs, answer);
      return;
    }
    const renewed = new Promise<Grant>((resolve, reject) => this.#renewals.add(keys, value, ttlMs, remainingMs, { resolve, reject }));
    observeGrant('extend', this.settings.clock, { resources: keys, ttlMs }, () => renewed).then(answer.resolve, answer.reject);
  }

  // Not async: an async function that returns a promise costs its caller two
  // more microtasks, on every release.
  #observedRelease(keys: readonly string[], value: string, contended?: boolean, writesOut?: WritesOut): Promise<ReleaseResult> {
    if (!channels.release.hasSubscribers && !channels.releaseSettled.hasSubscribers) return this.releaseOnNodes(keys, value, contended, writesOut);
    return observeRelease(this.settings.clock, keys, () => this.releaseOnNodes(keys, value, contended, writesOut));
  }

  /**
   * On release: passes the lock straight to the next waiter of this process
   * for the same resources, if it was waiting for it (see Line.passesLeft)
   * and the lock has enough validity left for it (validEnoughToPass). The
   * keys stay on the nodes as they are; the waiter keeps the lock's value and
   * validity. Never with fencing: each holder needs a token of its own.
   */
  #passOn(lock: Lock): ReleaseResult | undefined {
    if (!this.waitsInLocalLine) return this.passesToWaiting ? this.#passToWaiting(lock) : undefined;
    const line = this.lineSpace.lines.get(lineKey(lock.resources));
    if (!(line instanceof Line)) return undefined;
    const taker = line.places[0]?.taker;
    if (!taker) return undefined;
    const passes =
      !this.settings.fencing &&
      line.passesLeft > 0 &&
      taker.owner === this &&
      // A lock whose claim is still out passes as it will be: the taker follows the claim too.
      (lock.pendingClaim !== undefined || validEnoughToPass(lock.remainingMs(), taker.ttlMs, this.settings)) &&
      taker.offer({ value: lock.value, validUntil: lock.validUntil, claim: lock.pendingClaim, writesOut: lock.writesOut });
    if (!passes) {
      taker.holderReleasing(line.passesLeft === 0 && line.handedOff);
      return undefined;
    }
    line.passesLeft--;
    const result = new PassedRelease(this.nodeCount);
    publish<ReleaseEvent>('release', () => ({ resources: lock.resources, released: 0, passedOn: true, durationMs: 0, nodes: [] }));
    return result;
  }

  #waitIn(keys: readonly string[], wait: ContendedWait): Set<ContendedWait> {
    const key = this.#waitingKey(keys);
    let waiting = this.#waiting.get(key);
    if (!waiting) {
      waiting = new Set();
      this.#waiting.set(key, waiting);
    }
    waiting.add(wait);
    return waiting;
  }

  #stopWaiting(keys: readonly string[], waiting: Set<ContendedWait>, wait: ContendedWait): void {
    waiting.delete(wait);
    if (waiting.size === 0) this.#waiting.delete(this.#waitingKey(keys));
  }

  /**
   * passesToWaiting's release: the lock goes to the first waiter of this
   * process for the same keys that can take it now (not while its own
   * attempt is out, nor once it stands in the nodes' lines), with the lock's
   * value, keys and validity; the nodes are not asked. At most as many times in a row as waiters were waiting
   * when it last came from the nodes (Line.passesLeft's bound), so that
   * waiters of other processes, in the nodes' lines, wait no longer than one
   * round of ours.
   */
  #passToWaiting(lock: Lock): ReleaseResult | undefined {
    const passesLeft = this.#passesLeft.get(lock) ?? 0;
    if (passesLeft <= 0 || this.settings.fencing) return undefined;
    const waiting = this.#waiting.get(this.#waitingKey(lock.resources));
    if (!waiting) return undefined;
    const handover: LocalHandover = { value: lock.value, validUntil: lock.validUntil, writesOut: lock.writesOut, keys: lock.resources, passesLeft: passesLeft - 1 };
    for (const wait of waiting) {
      // Not to one in the nodes' lines: a release there may be reserving it a slot, which would then wait for nobody.
      if (wait.linePosition?.inLine || !validEnoughToPass(lock.remainingMs(), wait.ttlMs, this.settings) || !wait.offer(handover)) continue;
      publish<ReleaseEvent>('release', () => ({ resources: lock.resources, released: 0, passedOn: true, durationMs: 0, nodes: [] }));
      return new PassedRelease(this.nodeCount);
    }
    return undefined;
  }

  /** The lock, when a quorum handed it to this waiter (see handoffGrant.ts) with validity left. */
  #takeHandoff(keys: readonly string[], value: string, ttlMs: number, attempt: number, wait: ContendedWait): Promise<Grant> | undefined {
    const found = wait.peekHandoff();
    if (!found) return undefined;
    const { reservation, position } = found;
    // The claim may set a TTL shorter than the reservation: the key lasts the shorter of the two.
    const until = validUntil(Math.min(reservation.reservationMs, ttlMs), position.attemptSentAt, this.settings);
    if (until <= this.settings.clock.now()) return undefined;
    wait.acceptHandoff();
    if (!channels.acquire.hasSubscribers) return this.handedOffGrant(keys, value, ttlMs, position, reservation, until);
    return observeGrant('acquire', this.settings.clock, { resources: keys, ttlMs, attempt, handedOff: true }, () =>
      this.handedOffGrant(keys, value, ttlMs, position, reservation, until),
    );
  }

  #passedGrant(keys: readonly string[], ttlMs: number, attempt: number, handover: LocalHandover): Grant {
    const grant: Grant = { validUntil: handover.validUntil, ttlMs, outcomes: [], contended: true, claim: handover.claim, writesOut: handover.writesOut, keys: handover.keys };
    publish<AcquireEvent>('acquire', () => ({
      resources: keys,
      ttlMs,
      attempt,
      granted: true,
      passed: true,
      durationMs: 0,
      validityMs: handover.validUntil - this.settings.clock.now(),
      nodes: [],
    }));
    return grant;
  }

  #validate(resources: Resources, ttlMs: number): readonly string[] {
    const keys = normalizeResources(resources);
    assertTtl(ttlMs);
    this.checkKeys(keys);
    return keys;
  }

  /**
   * A lock acquired just as the caller aborted is released, not dropped.
   * The common case returns the lock itself, not a promise: one microtask
   * fewer before the caller has its lock.
   */
  #handOver(keys: readonly string[], value: string, grant: Grant, signal: AbortSignal | undefined): Lock | Promise<never> {
    const lock = new Lock(this.#ops, grant.keys ?? keys, value, grant);
    const closing = this.#closing;
    if (closing) {
      // Granted after close(): released with the rest, never handed out.
      closing.trackRelease(lock.releaseForClose(closing.reason));
      return Promise.reject(closing.reason);
    }
    this.#held.add(lock);
    if (!signal?.aborted) return lock;
    return lock.release().then(() => {
      throw new AbortedError(signal.reason);
    });
  }
}

/**
 * What release() reports for a lock passed to the next waiter of this
 * process: no key was deleted (the waiter now holds them), no node was asked.
 */
class PassedRelease implements ReleaseResult {
  readonly released = 0;
  readonly outcomes: ReleaseResult['outcomes'] = [];
  readonly passedOn = true;

  constructor(readonly nodes: number) {}

  get settled(): Promise<SettledRelease> {
    return Promise.resolve({ released: 0, nodes: this.nodes, outcomes: [] });
  }
}

/**
 * How long an attempt may wait for a node's first connection: the acquire
 * timeout, or for a single attempt (tryAcquire, or acquireTimeoutMs 0) the
 * locker's, or else the default. A blackholed node answers neither the
 * handshake nor the ready check, and ioredis alone would wait for it forever.
 */
function connectWaitMs(acquireTimeoutMs: number): number {
  return acquireTimeoutMs > 0 ? acquireTimeoutMs : DEFAULT_OPTIONS.acquireTimeoutMs;
}

/**
 * A connection wait that reads the acquire's signal only if it waits for a
 * connection. A class, not an object literal with a getter: V8 gives each
 * such literal a dictionary of its own, which cost 2.5% of a lock cycle's CPU.
 */
class AcquireConnectWait implements ConnectWait {
  constructor(
    readonly until: number,
    private readonly abort: AcquireSignal,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}
