import { validUntil } from '../clock/validity.js';
import {
  InvalidArgumentError,
  LockExpiredError,
  LockHeldError,
  LockLostError,
  QuorumUnreachableError,
  ValidityExhaustedError,
} from '../shared/errors.js';
import type { Grant, ReleaseResult, SettledRelease, WritesOut } from '../shared/grant.js';
import { deferClaim } from '../shared/claim.js';
import type { ReleaseOutcome, RenewalsOutcome } from '../node/LockNode.js';
import type { VoteResult } from './vote.js';
import { LockManager } from '../lock/LockManager.js';
import { RENEWALS_PER_CALL, type RenewalEntry } from '../scripts/extendMany.js';
import type { Renewal } from '../lock/RenewalBatch.js';
import type { ResolvedOptions } from '../lock/options.js';
import {
  acquireFencedRequest,
  acquireInLineRequest,
  acquireRequest,
  extendManyRequest,
  extendRequest,
  type FencedOutcome,
  fenceRequest,
  inspectRequest,
  leaveRequest,
  type LockNode,
  type NodeRequest,
  releaseRequest,
  type UndoOutcome,
  undoInLineRequest,
  type VerifyOutcome,
  verifyRequest,
  finalRelease,
} from '../node/LockNode.js';
import { DeadlineQueue } from '../node/DeadlineQueue.js';
import type { NodeBackend } from '../node/NodeBackend.js';
import type { LinePlace } from '../scripts/acquire.js';
import { type ConnectWait, RequestDeadline } from '../node/RequestDeadline.js';
import { countStatus, type NodeOutcome } from '../shared/outcome.js';
import { syncedRequest, syncedTimeoutMs, waitTimeoutMs } from '../node/replicaSync.js';
import { largestTokens, standsOnQuorum } from './fencing.js';
import { type Inspection, summarizeInspection } from '../lock/inspection.js';
import { denialCause, quorumFor } from './quorum.js';
import { vote } from './vote.js';
import { GivenUpAttempts } from './GivenUpAttempts.js';
import { RenewalTally } from './RenewalTally.js';
import { SlicedCalls } from '../lock/SlicedCalls.js';
import { TASKS_PER_TURN } from '../lock/SharedTimer.js';
import { channels } from '../diagnostics/channels.js';
import { observeGrant } from '../diagnostics/observe.js';
import type { HandedReservation } from '../wakeup/handoffGrant.js';
import { keepPlace } from '../wakeup/LineKeepalive.js';
import type { LinePosition } from '../wakeup/LinePosition.js';
import { ReleaseSubscriber } from '../wakeup/ReleaseSubscriber.js';
import { ReleaseWatch } from '../wakeup/ReleaseWatch.js';
import { type LineSpace, lineKey, lineSpaceFor } from '../wakeup/WaitLine.js';

/**
 * Every locker's renewal answers, at most as many per turn as the shared
 * timer sends renewals per turn: the reply side of a turn is bounded like
 * its send side.
 */
const renewalAnswers = new SlicedCalls(TASKS_PER_TURN);

/**
 * The node requests of a primitive other than the mutex (a semaphore's):
 * how it takes and extends its keys on one node. The vote, validity, undo,
 * release on every node and the errors stay the engine's, so every primitive
 * keeps the Redlock rules.
 */
export interface PrimitiveRequests {
  /**
   * With fencing, a granting node's outcome carries its tokens. With
   * `place`, an attempt of a waiter from the wait lines (see waitKeys): a
   * node that refuses it keeps it in line and answers its place
   * (FencedOutcome.ticket), one that grants takes it out. With `probe`
   * (a primitive's later try within one attempt, see acquireOnNodes), a
   * node that refuses also says whether any other try could be granted
   * there now (FencedOutcome.full). With `choose` (one node only: a choice
   * is no vote another node could share), the node takes `choose` of the
   * keys after the first, of its own choosing (a semaphore's free permit
   * slots, in the order named), and names them (FencedOutcome.chosen).
   */
  acquire(keys: readonly string[], value: string, ttlMs: number, place?: LinePlace, probe?: boolean, choose?: number): NodeRequest<unknown, FencedOutcome>;
  extend(keys: readonly string[], value: string, ttlMs: number): NodeRequest<unknown, NodeOutcome>;
  /**
   * Many holders' extends (a batch of renewals) in one request per node,
   * each exactly as extend() would: whether each was extended, in order.
   * Absent: one extend request per holder.
   */
  renewMany?(renewals: readonly RenewalEntry[]): NodeRequest<readonly boolean[], RenewalsOutcome>;
  /**
   * Release, and the undo of a failed attempt. Absent: the mutex's
   * compare-and-delete of every key that holds the value, which leaves any
   * other key alone (a semaphore's limit record). With `rejoin` (the undo
   * of a failed attempt from the wait lines), the waiter is put back in its
   * place first, so that what it gives back may be handed straight back to it.
   */
  release?(keys: readonly string[], value: string, rejoin?: LinePlace): NodeRequest<number, ReleaseOutcome>;
  /** With fencing: writes the quorum's largest tokens back (default: the mutex's, on every key). */
  fence?(keys: readonly string[], value: string, tokens: readonly bigint[]): NodeRequest<unknown, NodeOutcome>;
  /**
   * The keys whose wait lines a waiter for `keys` stands in: their places
   * are kept alive and left through them, and the releases that wake it
   * announce on their channels (line.lua's wake_heads). The primitive's
   * release script decides whom a release wakes.
   */
  waitKeys(keys: readonly string[]): readonly string[];
}

/**
 * The Redlock algorithm over N nodes. With N = 1 it is the single-instance
 * lock, so RedisLock and Redlock share every line of it; other primitives
 * bring their own node requests (PrimitiveRequests) and share the rest.
 */
export class QuorumCoordinator extends LockManager {
  /** The nodes, in the order given. */
  protected readonly nodes: readonly LockNode[];
  /** floor(N / 2) + 1. */
  readonly quorum: number;
  protected readonly lineSpace: LineSpace;
  protected get nodeCount(): number {
    return this.nodes.length;
  }
  readonly #deadlines: DeadlineQueue;
  /** With syncReplicas: the deadlines of synced writes, which are longer (see syncedTimeoutMs). */
  readonly #syncedDeadlines: DeadlineQueue | undefined;
  /** The nodes whose keys need checking (cluster clients): usually none. */
  readonly #keyCheckers: readonly NodeBackend[];
  /** Undefined for the mutex, whose requests also serve its wait lines and fencing. */
  readonly #requests: PrimitiveRequests | undefined;
  /** Failed attempts of acquires still running whose writes may land late. */
  readonly #givenUp = new GivenUpAttempts();

  protected constructor(nodes: readonly LockNode[], settings: ResolvedOptions, requests?: PrimitiveRequests) {
    super(settings);
    this.nodes = nodes;
    this.#requests = requests;
    this.quorum = quorumFor(nodes.length);
    this.#deadlines = new DeadlineQueue(settings.clock, settings.nodeTimeoutMs);
    this.#syncedDeadlines = settings.syncReplicas
      ? new DeadlineQueue(settings.clock, syncedTimeoutMs(settings.nodeTimeoutMs, settings.syncReplicas))
      : undefined;
    this.#keyCheckers = nodes.map((node) => node.backend).filter((backend) => backend.checkKeys !== undefined);
    this.lineSpace = lineSpaceFor(nodes.map((node) => node.name).join(','));
    if (requests) {
      // A semaphore's or a read-write lock's every request is a script of its own: refused now, not after retrying.
      const unable = nodes.find((node) => !node.backend.runScript);
      if (unable) throw new InvalidArgumentError('clients', `node ${unable.name} cannot run scripts, which this primitive's requests all are`);
    }
    if (settings.fencing) {
      const unable = nodes.find((node) => !node.backend.acquireFenced || !node.backend.fence);
      if (unable) throw new InvalidArgumentError('options.fencing', `node ${unable.name} cannot hand out fencing tokens`);
    }
    if (settings.syncReplicas) {
      const unable = nodes.find((node) => !node.backend.synced);
      if (unable) {
        throw new InvalidArgumentError(
          'options.syncReplicas',
          `node ${unable.name} cannot wait for its replicas (a Redis Cluster client would send WAIT to any master)`,
        );
      }
    }
  }

  protected checkKeys(keys: readonly string[]): void {
    for (const backend of this.#keyCheckers) backend.checkKeys?.(keys, 'resources', this.settings.fencing);
  }

  /**
   * A mutex's waiters of one process line up (only the first asks the
   * nodes); a semaphore's or a read-write lock's may enter together, so each
   * asks for itself.
   */
  protected override get waitsInLocalLine(): boolean {
    return this.#requests === undefined;
  }

  /** The keys whose lines and channels waiters for `keys` use (PrimitiveRequests.waitKeys). */
  #waitKeys(keys: readonly string[]): readonly string[] {
    return this.#requests ? this.#requests.waitKeys(keys) : keys;
  }

  protected releaseWatch(keys: readonly string[]): ReleaseWatch {
    return new ReleaseWatch(
      this.nodes.map((node) => node.backend),
      this.#waitKeys(keys),
      this.settings.nodeTimeoutMs,
      this.quorum,
    );
  }

  protected keepPlace(keys: readonly string[], value: string, position: LinePosition): () => void {
    return keepPlace(
      this.nodes.map((node) => node.backend),
      this.#waitKeys(keys),
      value,
      position,
    );
  }

  protected leaveLines(keys: readonly string[], value: string, position: LinePosition, acquired: boolean): Promise<void> {
    const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines);
    const request = leaveRequest(this.#waitKeys(keys), value, acquired);
    const asked: Promise<unknown>[] = [];
    for (const index of position.nodes) {
      const node = this.nodes[index];
      if (node) asked.push(node.ask(request, deadline));
    }
    position.nodes.clear();
    return Promise.all(asked).then(noop, noop);
  }

  protected releaseIdleConnections(): void {
    for (const node of this.nodes) if (node.backend.pubSub) ReleaseSubscriber.closeIfIdle(node.backend.pubSub);
  }

  /** `probe`, `choose`: a primitive's later try of one attempt (PrimitiveRequests.acquire). */
  protected async acquireOnNodes(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
    probe = false,
    choose?: number,
  ): Promise<Grant> {
    const clock = this.settings.clock;
    const timeoutMs = this.#writeTimeout(ttlMs);
    const deadline = new RequestDeadline(clock, timeoutMs, this.#queueFor(timeoutMs), connectWait);
    // Validity counts from before the first request was sent.
    const startedAt = deadline.sentAt;
    const attempt = position?.startAttempt(startedAt);
    const place = position && { ticket: position.ticket, leaseMs: position.leaseMs };
    const request = this.#synced<FencedOutcome>(this.#acquireRequest(keys, value, ttlMs, place, probe, choose), timeoutMs, value);
    const result = await vote(this.nodes, this.quorum, request, deadline);
    if (position) {
      hearPlaces(position, result.byNode, attempt);
      // Slower nodes' tickets count too: the next request writes the largest back everywhere.
      if (result.byNode.includes(undefined)) void result.settled.then((all) => hearPlaces(position, all, attempt));
    }
    if (!result.granted) {
      this.#givenUp.note(value, keys, result.byNode, () => result.settled);
      await this.#undoAcquire(keys, value, result.byNode, position);
      throw this.#denial(keys, result.outcomes, () => new LockHeldError(this.#voteDetails(keys, result.outcomes)));
    }
    let fencingTokens: bigint[] | undefined;
    if (this.settings.fencing) {
      const perNode = result.outcomes.flatMap((o) => (o.tokens ? [o.tokens] : []));
      fencingTokens = largestTokens(perNode);
      if (!standsOnQuorum(perNode, fencingTokens, this.quorum)) {
        const tokens = fencingTokens;
        const fenceDeadline = new RequestDeadline(clock, timeoutMs, this.#queueFor(timeoutMs));
        const fence = this.#requests?.fence?.(keys, value, tokens) ?? fenceRequest(keys, value, tokens);
        const written = await vote(this.nodes, this.quorum, this.#synced(fence, timeoutMs, value), fenceDeadline);
        if (!written.granted) {
          await this.#undoAcquire(keys, value, result.byNode, position);
          throw this.#denial(keys, written.outcomes, () => new LockHeldError(this.#voteDetails(keys, written.outcomes)));
        }
      }
    }
    const until = validUntil(ttlMs, startedAt, this.settings);
    const left = until - clock.now();
    if (left > 0) {
      const writesOut = result.byNode.includes(undefined) ? result : undefined;
      return { validUntil: until, ttlMs, outcomes: result.outcomes, fencingTokens, contended: position !== undefined, keys, writesOut };
    }
    // Not back in its place: first in line, it would be handed the keys it
    // just gave back, to hold them reserved while it backs off (ContendedWait
    // does not retry at once after this error: the same round trips against
    // the same TTL would fail the same way). They go to the next waiter
    // instead; our ticket puts us back in our place at our next attempt.
    this.#givenUp.note(value, keys, result.byNode, () => result.settled);
    await this.#undoAcquire(keys, value, result.byNode, position, false);
    throw new ValidityExhaustedError(keys, left, result.outcomes);
  }

  protected handedOffGrant(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition,
    handed: HandedReservation,
    until: number,
  ): Promise<Grant> {
    // A claim that fails leaves the lock the reservation's validity (Grant.claim).
    const claim = deferClaim(() => this.#observedClaim(keys, value, ttlMs, position));
    const outcomes = handed.nodes.map((index): NodeOutcome => ({ node: (this.nodes[index] as LockNode).name, status: 'ok', ms: 0 }));
    return Promise.resolve({ validUntil: until, ttlMs, outcomes, contended: true, claim });
  }

  protected async claimOnNodes(keys: readonly string[], value: string, ttlMs: number, position: LinePosition): Promise<Grant> {
    const clock = this.settings.clock;
    const timeoutMs = this.#nodeTimeout(ttlMs);
    const deadline = new RequestDeadline(clock, timeoutMs, this.#deadlines);
    const startedAt = deadline.sentAt;
    const attempt = position.startAttempt(startedAt);
    // From the line, as any attempt of the waiter (a reader's rwRead.lua renews the lease it was handed).
    const request = this.#acquireRequest(keys, value, ttlMs, { ticket: position.ticket, leaseMs: position.leaseMs });
    const result = await vote(this.nodes, this.quorum, request, deadline);
    // Where it did not take the keys, it still stands in line: it leaves.
    void result.settled.then((all) => {
      hearPlaces(position, all, attempt);
      if (position.inLine) void this.leaveLines(keys, value, position, true);
    });
    if (!result.granted) throw this.#denial(keys, result.outcomes, () => new LockLostError(keys, result.outcomes));
    return this.#extendedGrant(keys, ttlMs, startedAt, result.outcomes);
  }

  /** What one try of an acquire sends: the primitive's own request, else the mutex's (from the line, fenced, or plain). */
  #acquireRequest(keys: readonly string[], value: string, ttlMs: number, place: LinePlace | undefined, probe = false, choose?: number): NodeRequest<unknown, FencedOutcome> {
    if (this.#requests) return this.#requests.acquire(keys, value, ttlMs, place, probe, choose);
    const fencing = this.settings.fencing;
    if (place) return acquireInLineRequest(keys, value, ttlMs, fencing, place);
    return fencing ? acquireFencedRequest(keys, value, ttlMs) : acquireRequest(keys, value, ttlMs);
  }

  #observedClaim(keys: readonly string[], value: string, ttlMs: number, position: LinePosition): Promise<Grant> {
    if (!channels.extend.hasSubscribers) return this.claimOnNodes(keys, value, ttlMs, position);
    return observeGrant('extend', this.settings.clock, { resources: keys, ttlMs, claim: true }, () =>
      this.claimOnNodes(keys, value, ttlMs, position),
    );
  }

  protected async extendOnNodes(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant> {
    const clock = this.settings.clock;
    // A reply after the lock's current validity could no longer prove it held without a gap.
    const timeoutMs = Math.max(1, Math.min(this.#writeTimeout(ttlMs), Math.ceil(remainingMs)));
    const deadline = new RequestDeadline(clock, timeoutMs, this.#queueFor(timeoutMs));
    const startedAt = deadline.sentAt;
    const request = this.#requests ? this.#requests.extend(keys, value, ttlMs) : extendRequest(keys, value, ttlMs);
    const result = await vote(this.nodes, this.quorum, this.#synced(request, timeoutMs, value), deadline);
    if (result.granted) return this.#extendedGrant(keys, ttlMs, startedAt, result.outcomes);
    throw this.#denial(keys, result.outcomes, () => new LockLostError(keys, result.outcomes));
  }

  /**
   * One request per node for the whole batch (one script call per chunk of
   * locks, one WAIT behind them with syncReplicas), and a vote per lock:
   * each lock is granted or lost on its own, its validity counted from the
   * batch's start; a node's error or timeout counts against every lock of
   * the batch. Renewals that must be decided within less than the node
   * timeout (little validity left, or a TTL that short) go in a batch of
   * their own, whose timeout is the shortest validity among them: sent one
   * by one, as extend() sends them, a process that fell behind (10,000 locks
   * on a loaded machine) multiplied its requests by a hundred just when it
   * could least afford them.
   */
  protected renewOnNodes(renewals: readonly Renewal[]): void {
    if (this.#requests && !this.#requests.renewMany) {
      for (const r of renewals) this.extendOnNodes(r.keys, r.value, r.ttlMs, r.remainingMs).then(r.answer.resolve, r.answer.reject);
      return;
    }
    const timeoutMs = this.settings.nodeTimeoutMs;
    const usual: Renewal[] = [];
    const hurried: Renewal[] = [];
    for (const renewal of renewals) (renewal.ttlMs >= timeoutMs && renewal.remainingMs >= timeoutMs ? usual : hurried).push(renewal);
    if (usual.length > 0) this.#renewBatch(usual);
    if (hurried.length > 0) this.#renewBatch(hurried);
  }

  #renewBatch(batch: readonly Renewal[]): void {
    // A node runs a batch's script calls one after the other: each gets the
    // node timeout. But a reply after a lock's validity cannot renew it without a gap.
    let shortest = Infinity;
    for (const renewal of batch) shortest = Math.min(shortest, renewal.remainingMs, renewal.ttlMs);
    const perCall = this.settings.nodeTimeoutMs;
    const batchTimeoutMs = Math.max(1, Math.floor(Math.min(Math.ceil(batch.length / RENEWALS_PER_CALL) * perCall, shortest)));
    const deadline = new RequestDeadline(this.settings.clock, batchTimeoutMs, this.#deadlines);
    const startedAt = deadline.sentAt;
    const tally = new RenewalTally(this.nodes.length, this.quorum, batch.length, (index, granted, outcomes) => {
      const renewal = batch[index] as Renewal;
      const { keys, ttlMs } = renewal;
      // Decided now, on the replies as they came; answered in slices (renewalAnswers).
      if (!granted) {
        renewalAnswers.queue(renewal.answer.reject, this.#denial(keys, outcomes, () => new LockLostError(keys, outcomes)));
        return;
      }
      let grant: Grant;
      try {
        grant = this.#extendedGrant(keys, ttlMs, startedAt, outcomes);
      } catch (error) {
        renewalAnswers.queue(renewal.answer.reject, error);
        return;
      }
      renewalAnswers.queue(renewal.answer.resolve, grant);
    });
    const renewMany = (this.#requests?.renewMany ?? extendManyRequest)(batch);
    // The batch's values, listed once by the request (its writes), serve the replica sync too.
    const request = this.#synced(renewMany, batchTimeoutMs, renewMany.writes ?? []);
    for (const node of this.nodes) node.send(request, deadline, (outcome) => tally.count(outcome));
  }

  /** A quorum took the new TTL: validity from `startedAt`, or ValidityExhaustedError when none is left (extend and claim). */
  #extendedGrant(keys: readonly string[], ttlMs: number, startedAt: number, outcomes: readonly NodeOutcome[]): Grant {
    const until = validUntil(ttlMs, startedAt, this.settings);
    const left = until - this.settings.clock.now();
    if (left > 0) return { validUntil: until, ttlMs, outcomes };
    throw new ValidityExhaustedError(keys, left, outcomes);
  }

  /**
   * The quorum holds the keys for as long as the shortest-lived of its members
   * that answered; validity counts from before the first request, as for an
   * acquire, with that remaining TTL as the lease.
   */
  protected async verifyOnNodes(keys: readonly string[], value: string, connectWait: ConnectWait): Promise<Grant> {
    const clock = this.settings.clock;
    const deadline = new RequestDeadline(clock, this.settings.nodeTimeoutMs, this.#deadlines, connectWait);
    const startedAt = deadline.sentAt;
    const result = await vote(this.nodes, this.quorum, verifyRequest(keys, value), deadline);
    if (!result.granted) throw this.#denial(keys, result.outcomes, () => new LockLostError(keys, result.outcomes));
    const ttlMs = quorumLease(result.outcomes, this.quorum);
    const until = validUntil(ttlMs, startedAt, this.settings);
    if (until - clock.now() > 0) return { validUntil: until, ttlMs, outcomes: result.outcomes };
    throw new LockExpiredError(keys);
  }

  /**
   * Resolves when the vote is decided; the slowest nodes finish in `settled`.
   * Waiters of other processes marked the keys they found held; this
   * process's own waiters in line may not have asked Redis yet, so with them
   * every deletion is announced.
   */
  protected async inspectOnNodes(keys: readonly string[], connectWait: ConnectWait): Promise<Inspection> {
    const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines, connectWait);
    // Every node's reading is wanted, not just a quorum's: no early decision.
    const outcomes = await Promise.all(this.nodes.map((node) => node.ask(inspectRequest(keys), deadline)));
    return summarizeInspection(keys, outcomes, this.quorum);
  }

  protected async releaseOnNodes(keys: readonly string[], value: string, contended = true, writesOut?: WritesOut): Promise<ReleaseResult> {
    const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines);
    const nodes = this.nodes.length;
    const own = this.#requests?.release?.(keys, value);
    const request = own ? finalRelease(own, value) : releaseRequest(keys, value, this.#announce(keys, contended), true);
    const out = writesOut?.stillOut();
    const result = await vote(this.nodes, this.quorum, request, deadline);
    if (writesOut && out?.includes(true)) this.#releaseAfterWritesOut(request, value, out, writesOut, result);
    return new DecidedRelease(nodes, result);
  }

  /** Only for the mutex's release: another primitive's release script wakes its own waiters, and the lookup joins its keys for nothing. */
  #announce(keys: readonly string[], contended: boolean): 'all' | 'marked' | 'plain' {
    return this.lineSpace.hasWaiters(lineKey(keys)) ? 'all' : contended ? 'marked' : 'plain';
  }

  /**
   * The release went out while the acquire's write on some node had not
   * answered. On the same connection it ran after that write, unless the
   * write met NOSCRIPT: it is then sent again in full behind the release,
   * which found nothing there, and would keep the keys for their whole TTL
   * (a lock released at once, on a node's first use of the script). With
   * `syncReplicas` the write went on a connection of its own, which the
   * release may overtake. So on each such node where the release deleted
   * nothing, it goes again once the write has answered anything but a
   * refusal: `ok`, or an error that may have written (a short sync did);
   * where the write timed out, also after it settles (LateWrites), as for an
   * abandoned attempt.
   */
  #releaseAfterWritesOut(
    request: NodeRequest<unknown, ReleaseOutcome>,
    value: string,
    out: readonly boolean[],
    writesOut: WritesOut,
    released: VoteResult<ReleaseOutcome>,
  ): void {
    void Promise.all([writesOut.settled, released.settled]).then(([writes, releases]) => {
      const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines);
      this.nodes.forEach((node, index) => {
        const write = writes[index];
        if (!out[index] || write === undefined || write.status === 'held' || releases[index]?.status === 'ok') return;
        if (write.status === 'timeout') node.abandon(value, (backend) => request.send(backend));
        void node.ask(request, deadline);
      });
    });
  }

  /**
   * After a failed or too-slow acquire, deletes our value wherever it may have
   * landed: on every node except those that answered that another value holds
   * the keys (the acquire script wrote nothing there). Errors, timeouts and
   * nodes that had not answered yet are included, since their SET may have
   * been applied. The release follows the acquire on the same connection, so
   * it runs after it. A waiter in the wait lines (`position`) is put back in
   * its place there (unless `rejoinLine` is false), so a node that granted
   * it keeps it first in line.
   */
  async #undoAcquire(
    keys: readonly string[],
    value: string,
    decided: readonly (NodeOutcome | undefined)[],
    position: LinePosition | undefined,
    rejoinLine = true,
  ): Promise<void> {
    const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines);
    const rejoin = rejoinLine && position && position.ticket > 0 ? { ticket: position.ticket, leaseMs: position.leaseMs } : undefined;
    const own = this.#requests?.release?.(keys, value, rejoin);
    const undo: NodeRequest<unknown, UndoOutcome> = own ?? (rejoin ? undoInLineRequest(keys, value, rejoin) : releaseRequest(keys, value, 'none'));
    const undone = this.nodes.flatMap((node, index) => (decided[index]?.status === 'held' ? [] : [{ node, index }]));
    // Where the undo rejoined, we may stand in line again: keep that place
    // alive, and leave it if we give up (else it would take a handoff,
    // reserved for nobody, until its lease ran out).
    if (rejoin) for (const { index } of undone) position?.heard(index, 0);
    const outcomes = await Promise.all(undone.map(({ node, index }) => node.ask(undo, deadline).then((outcome) => ({ outcome, index }))));
    if (!position) return;
    // Our value deleted where the attempt took nothing was a handoff's reservation (LinePosition.tookBack).
    for (const { outcome, index } of outcomes) {
      if (outcome.released > 0 && decided[index]?.status !== 'ok') position.tookBack(index, outcome.rejoinedAtUs);
    }
  }

  protected endAttempts(value: string, kept: readonly string[] | undefined): boolean {
    const { released, coveredByLock } = this.#givenUp.take(value, kept);
    for (const { keys, mayFollowUndo } of released) void mayFollowUndo.then((nodes) => this.#abandon(keys, value, nodes));
    return coveredByLock;
  }

  /**
   * An acquire that ended without a lock on `keys` gave up on writes of
   * `value` there: on each node where one may have run after its undo (it
   * timed out, or met NOSCRIPT and was resent behind the undo), the undo is
   * sent now (it follows a write that has run since) and again after each
   * write still out (LateWrites). No attempt will write the value again, so
   * nothing live is deleted.
   */
  #abandon(keys: readonly string[], value: string, mayFollowUndo: readonly boolean[]): void {
    const undo = this.#requests?.release?.(keys, value) ?? releaseRequest(keys, value, 'marked');
    const deadline = new RequestDeadline(this.settings.clock, this.settings.nodeTimeoutMs, this.#deadlines);
    this.nodes.forEach((node, index) => {
      if (!mayFollowUndo[index]) return;
      node.abandon(value, (backend) => undo.send(backend));
      void node.ask(undo, deadline);
    });
  }

  #denial(keys: readonly string[], outcomes: readonly NodeOutcome[], contended: () => Error): Error {
    const failures = countStatus(outcomes, 'error') + countStatus(outcomes, 'timeout');
    return denialCause(this.nodes.length, this.quorum, failures) === 'unreachable'
      ? new QuorumUnreachableError(this.#voteDetails(keys, outcomes))
      : contended();
  }

  #voteDetails(resources: readonly string[], outcomes: readonly NodeOutcome[]) {
    return { resources, nodeCount: this.nodes.length, quorum: this.quorum, outcomes };
  }

  /** With `syncReplicas`, a grant counts once WAIT confirmed it; see replicaSync.ts for its timeouts. */
  #synced<O extends NodeOutcome>(request: NodeRequest<unknown, O>, requestTimeoutMs: number, value: string | readonly string[]): NodeRequest<unknown, O> {
    const sync = this.settings.syncReplicas;
    if (sync === undefined) return request;
    return syncedRequest(request, sync.replicas, waitTimeoutMs(requestTimeoutMs, this.settings.nodeTimeoutMs, sync), value);
  }

  /**
   * How long a write that counts as a vote may take: the node timeout, or
   * with `syncReplicas` the longer time a synced write has. Never longer
   * than the lock it asks for.
   */
  #writeTimeout(ttlMs: number): number {
    const sync = this.settings.syncReplicas;
    const timeoutMs = sync ? syncedTimeoutMs(this.settings.nodeTimeoutMs, sync) : this.settings.nodeTimeoutMs;
    return Math.min(timeoutMs, ttlMs);
  }

  /** The deadline queue whose deadlines last `timeoutMs`, if any (RequestDeadline then needs no timer of its own). */
  #queueFor(timeoutMs: number): DeadlineQueue | undefined {
    return timeoutMs === this.settings.nodeTimeoutMs ? this.#deadlines : this.#syncedDeadlines;
  }

  /** A request may not outlive the lock it asks for. */
  #nodeTimeout(ttlMs: number): number {
    return Math.min(this.settings.nodeTimeoutMs, ttlMs);
  }
}

function noop(): void {}

/**
 * What each node said of our place: granted (we left its lines), or a ticket
 * (we wait there; with the node's server time then, if the reply is to the
 * latest `attempt`).
 */
function hearPlaces(position: LinePosition, byNode: readonly (FencedOutcome | undefined)[], attempt: number | undefined): void {
  const latest = attempt === position.attempt;
  byNode.forEach((outcome, index) => {
    if (!outcome) return;
    if (outcome.status === 'ok') position.heard(index, null);
    else if (outcome.ticket !== undefined) position.heard(index, outcome.ticket, latest ? outcome.serverUs : undefined);
    // An error or a timeout may have been applied: that node may hold a place.
    else if (outcome.status !== 'held') position.heard(index, 0);
  });
}

/** The quorum-th longest PTTL among the nodes that hold the value: until then, a quorum holds it. */
function quorumLease(outcomes: readonly VerifyOutcome[], quorum: number): number {
  const pttls = outcomes.flatMap((o) => (o.status === 'ok' && o.pttlMs !== undefined ? [o.pttlMs] : []));
  pttls.sort((a, b) => b - a);
  return pttls[quorum - 1] ?? 0;
}

/**
 * A decided release. Users log and serialize it, so its own properties are
 * the documented ones and nothing else: the vote behind it is a #private
 * field, and `settled` an accessor, built when first read, since most
 * callers never wait for the slowest node.
 */
class DecidedRelease implements ReleaseResult {
  readonly released: number;
  readonly nodes: number;
  readonly outcomes: ReleaseResult['outcomes'];
  readonly #vote: VoteResult<ReleaseOutcome>;
  #settled: Promise<SettledRelease> | undefined;

  constructor(nodes: number, vote: VoteResult<ReleaseOutcome>) {
    this.released = countStatus(vote.outcomes, 'ok');
    this.nodes = nodes;
    this.outcomes = DecidedRelease.#shares(vote.outcomes);
    this.#vote = vote;
  }

  get settled(): Promise<SettledRelease> {
    this.#settled ??= this.#vote.settled.then((outcomes) => ({
      released: countStatus(outcomes, 'ok'),
      nodes: this.nodes,
      outcomes: DecidedRelease.#shares(outcomes),
    }));
    return this.#settled;
  }

  /**
   * A node reports how many keys it deleted, but `released` counts nodes at
   * every level of a result, so a node's own is 1 or 0. Only a multi-resource
   * lock can see more than 1: the common case allocates nothing.
   */
  static #shares(outcomes: readonly ReleaseOutcome[]): ReleaseResult['outcomes'] {
    for (let i = 0; i < outcomes.length; i++) {
      if ((outcomes[i] as ReleaseOutcome).released > 1) {
        return outcomes.map((outcome) => (outcome.released > 1 ? { ...outcome, released: 1 } : outcome) as ReleaseResult['outcomes'][number]);
      }
    }
    return outcomes as ReleaseResult['outcomes'];
  }
}
