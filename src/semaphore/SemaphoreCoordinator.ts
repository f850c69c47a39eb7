import { InvalidArgumentError, isQuorumLockError, LimitMismatchError, LockHeldError } from '../shared/errors.js';
import type { Grant } from '../shared/grant.js';
import type { NodeOutcome } from '../shared/outcome.js';
import type { Lock } from '../lock/Lock.js';
import type { LockedRoutine } from '../lock/Locker.js';
import type { ResolvedOptions } from '../lock/options.js';
import type { FencedOutcome, LockNode } from '../node/LockNode.js';
import type { ConnectWait } from '../node/RequestDeadline.js';
import { QuorumCoordinator } from '../redlock/QuorumCoordinator.js';
import { holdWhile } from '../lock/reentry/holdWhile.js';
import { assertFunction } from '../lock/validate.js';
import type { LinePosition } from '../wakeup/LinePosition.js';
import { candidateSlots } from './candidateSlots.js';
import { RESERVATION_MS } from '../scripts/line.js';
import { type SemaphoreAcquireOptions, type SemaphoreTryAcquireOptions, takePermits } from './options.js';
import { permitKeys, resourceOf } from './permitKeys.js';
import { semaphoreRequests } from './semaphoreRequests.js';

/**
 * A counting semaphore on the quorum engine: `limit` permit slots per
 * resource, each a mutex under the Redlock rules; a holder of `permits` takes
 * that many slots as one multi-key lock (see the README's proof). The engine
 * is asked for the resource's limit record and as many slots as permits. On
 * several nodes one attempt tries the free slots in a random order, each set
 * a vote, until one is granted; on one node, after its first set, the node
 * chooses the slots in one request (see #onOneNode).
 */
export abstract class SemaphoreCoordinator extends QuorumCoordinator {
  /** How many permits of a resource may be held at once. */
  readonly limit: number;

  protected constructor(nodes: readonly LockNode[], settings: ResolvedOptions, limit: number) {
    // One node hands freed slots to its waiters (semaphoreRelease.lua); several wake them.
    super(nodes, settings, semaphoreRequests(limit, settings, nodes.length === 1 ? RESERVATION_MS : 0));
    this.limit = limit;
  }

  /**
   * Waits per the retry policy until `permits` (default 1) of the resource's
   * permits are ours.
   *
   * @param resource - The semaphore's name: one string (a permit is not taken on several resources).
   * @param ttlMs - How long the permits are held unless extended, in milliseconds (a positive integer).
   * @param options - The acquire options, and `permits`.
   * @returns The permits as one {@link Lock}: extend and release them through it.
   * @throws {@link LockHeldError} when too few permits were free until the acquire timeout;
   * {@link LimitMismatchError} when the nodes hold another limit for the resource;
   * {@link QuorumUnreachableError}, {@link ValidityExhaustedError} as the mutex's acquire;
   * {@link AbortedError} when `options.signal` aborts;
   * {@link InvalidArgumentError} for a bad argument (`permits` above the limit).
   */
  override async acquire(resource: string, ttlMs: number, options?: SemaphoreAcquireOptions): Promise<Lock> {
    const { permits, rest } = takePermits(options, this.limit);
    return super.acquire(this.#asked(resource, permits), ttlMs, rest);
  }

  /**
   * One attempt over the free slots; resolves to null when too few permits are free.
   *
   * @param resource - The semaphore's name.
   * @param ttlMs - How long the permits are held unless extended, in milliseconds.
   * @param options - `signal`, and `permits`.
   * @returns The permits as one {@link Lock}, or null.
   * @throws As acquire(), except that a held semaphore resolves to null.
   */
  override async tryAcquire(resource: string, ttlMs: number, options?: SemaphoreTryAcquireOptions): Promise<Lock | null> {
    const { permits, rest } = takePermits(options, this.limit);
    return super.tryAcquire(this.#asked(resource, permits), ttlMs, rest);
  }

  /**
   * Acquires, runs `routine` while extending the permits in the background,
   * then releases them. Resolves or rejects as the routine does.
   *
   * @param resource - The semaphore's name.
   * @param ttlMs - The permits' TTL in milliseconds; the auto-extension renews it.
   * @param routine - Called with the lock's `signal` (aborts when the permits are lost) and the lock.
   * @param options - As for acquire().
   * @throws As acquire(); then what `routine` throws.
   */
  override async using<T>(resource: string, ttlMs: number, routine: LockedRoutine<T>, options?: SemaphoreAcquireOptions): Promise<T> {
    assertFunction(routine, 'routine');
    return holdWhile(await this.acquire(resource, ttlMs, options), routine, this.settings);
  }

  /** A permit is any permit: one released here goes to a waiter of this process for as many permits (see LockManager.passToWaiting). */
  protected override get passesToWaiting(): boolean {
    return true;
  }

  protected override get triesBeforePassWait(): number {
    return this.limit;
  }

  /**
   * On one node a release hands the freed slot to the next waiter in line
   * (semaphoreRelease.lua) and tells it: a waiter that tried every longest
   * backoff delay meanwhile found nothing free (on 8 processes × 8 waiters,
   * three such tries per permit, the most of its requests). It tries after a
   * reservation's length instead, the time a dead waiter's reservation keeps
   * a slot in any case.
   */
  protected override lineFallbackMs(maxDelayMs: number): number {
    return this.nodeCount === 1 ? Math.max(maxDelayMs, RESERVATION_MS) : maxDelayMs;
  }

  /**
   * Not offered: a semaphore permit cannot be re-entered by its value.
   *
   * @returns A promise that rejects with {@link InvalidArgumentError}.
   */
  override reenter(): Promise<Lock> {
    return Promise.reject(new InvalidArgumentError('resources', 'a semaphore permit cannot be re-entered by its value'));
  }

  protected override acquireOnNodes(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    const resource = resourceOf(keys[0] ?? '');
    const sets = candidateSlots(this.limit, keys.length - 1, Math.random);
    if (this.nodeCount === 1) return this.#onOneNode(resource, sets, keys.length - 1, value, ttlMs, position, connectWait);
    // The first set outside the loop of the others: an uncontended permit
    // pays for no async frame of the loop. The grant names the slots it
    // took (Grant.keys).
    const first = super.acquireOnNodes(permitKeys(resource, sets[0] ?? []), value, ttlMs, position, connectWait);
    return first.catch((error: unknown) => this.#tryOtherSets(error, resource, sets, value, ttlMs, position, connectWait));
  }

  /**
   * On one node the node chooses: from the wait line at once (a release may
   * have reserved a slot for us), else after the first set was held, one try
   * that names every slot in the first set's order and takes `permits` of
   * those it finds reserved for us or free (semaphoreTake.lua). A quorum of
   * one cannot split, so the node's choice is the permit: each slot a
   * mutex key, as the slot rule asks. The grant names the slots taken.
   */
  #onOneNode(
    resource: string,
    sets: readonly number[][],
    permits: number,
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    const order = permitKeys(resource, orderOf(sets, this.limit));
    const take = () => super.acquireOnNodes(order, value, ttlMs, position, connectWait, false, permits).then((grant) => chosenGrant(grant, order));
    if (position) return take().catch((error: unknown) => Promise.reject(this.#noSet(resource, this.#held(error))));
    return super.acquireOnNodes(permitKeys(resource, sets[0] ?? []), value, ttlMs, undefined, connectWait).catch((error: unknown) => {
      this.#held(error);
      return take().catch((next: unknown) => Promise.reject(this.#noSet(resource, this.#held(next))));
    });
  }

  /** After the first set was refused with `refusal`: the other sets, until one is granted or none could be. */
  async #tryOtherSets(
    refusal: unknown,
    resource: string,
    sets: readonly number[][],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    let held = this.#held(refusal);
    // A quorum put us in line: too few slots are free there, so no other set would be granted.
    if (position && countPlaces(held.outcomes) >= this.quorum) throw this.#noSet(resource, held);
    // A plain attempt's later tries probe (every slot named), so that a full
    // semaphore costs two requests, not `limit`; the first stays the two-key
    // request an uncontended permit needs.
    const probe = position === undefined;
    for (const slots of sets.slice(1)) {
      try {
        return await super.acquireOnNodes(permitKeys(resource, slots), value, ttlMs, position, connectWait, probe);
      } catch (error) {
        held = this.#held(error);
        if (position && countPlaces(held.outcomes) >= this.quorum) break;
        // A quorum says no other set is free.
        if (probe && countFull(held.outcomes) >= this.quorum) break;
      }
    }
    throw this.#noSet(resource, held);
  }

  /** A refused set's LockHeldError; any other error (a limit mismatch first) ends the attempt. */
  #held(error: unknown): LockHeldError {
    const mismatch = limitMismatchIn(error);
    if (mismatch) throw mismatch;
    if (!(error instanceof LockHeldError)) throw error;
    return error;
  }

  #noSet(resource: string, held: LockHeldError): LockHeldError {
    return new LockHeldError({ resources: [resource], nodeCount: this.nodeCount, quorum: this.quorum, outcomes: held.outcomes });
  }

  /** What the engine is asked for: the limit record, and a placeholder slot per permit wanted. */
  #asked(resource: string, permits: number): string[] {
    if (typeof resource !== 'string' || resource === '') {
      throw new InvalidArgumentError('resource', 'expected a non-empty string: a semaphore counts permits of one resource');
    }
    const slots: number[] = [];
    for (let slot = 0; slot < permits; slot++) slots.push(slot);
    return permitKeys(resource, slots);
  }
}

/** Every slot, in the order of the candidate sets (their first slots: the random permutation they window). */
function orderOf(sets: readonly number[][], limit: number): number[] {
  if (sets.length === limit) return sets.map((set) => set[0] as number);
  // One set of every slot (permits = limit): its own order.
  return [...(sets[0] ?? [])];
}

/** A grant of a try the node chose the slots of: they are the permit's keys. */
function chosenGrant(grant: Grant, order: readonly string[]): Grant {
  const chosen = (grant.outcomes[0] as FencedOutcome | undefined)?.chosen;
  return chosen ? { ...grant, keys: [order[0] ?? '', ...chosen] } : grant;
}

/** The nodes that answered with a place in the wait line (FencedOutcome.ticket). */
function countPlaces(outcomes: readonly NodeOutcome[]): number {
  return outcomes.filter((outcome) => (outcome as FencedOutcome).ticket !== undefined).length;
}

/** The nodes that answered a probing try with too few slots free for any other. */
function countFull(outcomes: readonly NodeOutcome[]): number {
  return outcomes.filter((outcome) => (outcome as FencedOutcome).full === true).length;
}

function limitMismatchIn(error: unknown): LimitMismatchError | undefined {
  if (!isQuorumLockError(error) || !('outcomes' in error)) return undefined;
  const outcomes = error.outcomes as readonly NodeOutcome[];
  return outcomes.find((outcome) => outcome.error instanceof LimitMismatchError)?.error as LimitMismatchError | undefined;
}
