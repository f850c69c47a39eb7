/**
 * A Redlock that records every quorum round it runs: each acquire attempt
 * (acquire() retries are separate rounds with the same value), each extend
 * (including using()'s auto-extensions) and each release, with invoke and
 * completion times, the node outcomes and the validity granted.
 *
 * It is the public Redlock class with its three node operations wrapped, so
 * the algorithm under test is exactly the one users get: every override calls
 * super and only observes. It also notes when a lock reaches the caller, with
 * its fencing tokens (`fencing: true`).
 */
import type { Lock, LockedRoutine, NodeOutcome, RedisClient, RedlockOptions, Resources, TryAcquireOptions, UsingOptions, AcquireOptions } from '../../../src/index.js';
import { Redlock, isQuorumLockError, ErrorCode } from '../../../src/index.js';
import type { Grant, ReleaseResult, WritesOut } from '../../../src/shared/grant.js';
import type { Renewal } from '../../../src/lock/RenewalBatch.js';
import type { LinePosition } from '../../../src/wakeup/LinePosition.js';
import type { ConnectWait } from '../../../src/node/RequestDeadline.js';
import { fromMonotonic, sharedNow } from './timeBase.js';
import type { HandoverRecord, NodeOutcomeRecord, OpKind, OpRecord, OpResult, ReentryRecord, ReleaseIntent } from './types.js';

export interface HistorySink {
  op(record: OpRecord): void;
  handover(record: HandoverRecord): void;
  /**
   * A release round is about to go out (its OpRecord follows when it is
   * decided). A sink whose process may be killed mid-release needs it: the
   * holder let go at this moment even if its record never arrives.
   */
  releasing?(record: ReleaseIntent): void;
  /** A hold re-entered on a held lock (workload.ts records them: they make no round of their own). */
  reentry?(record: ReentryRecord): void;
}

export interface ObserverOptions {
  /** Label of this locker in the history, e.g. 'c0' or 'w1.c0'. */
  readonly client: string;
  readonly sink: HistorySink;
  /** Names for nodes, keyed by the library's node label (host:port of the client). */
  readonly nodeNames?: ReadonlyMap<string, string>;
}

/** A collecting sink, for one process. */
export class HistoryBuffer implements HistorySink {
  readonly ops: OpRecord[] = [];
  readonly handovers: HandoverRecord[] = [];
  readonly reentries: ReentryRecord[] = [];
  op(record: OpRecord): void {
    this.ops.push(record);
  }
  handover(record: HandoverRecord): void {
    this.handovers.push(record);
  }
  reentry(record: ReentryRecord): void {
    this.reentries.push(record);
  }
}

export class ObservedRedlock extends Redlock {
  readonly #observer: ObserverOptions;
  /** using() may reach the lock through acquire() too: one handover per lock. */
  readonly #handed = new WeakSet<Lock>();
  #seq = 0;

  constructor(clients: readonly RedisClient[], options: Omit<RedlockOptions, 'clock'>, observer: ObserverOptions) {
    // validUntil converts to the shared time base only from performance.now(), the default clock.
    if ('clock' in options) throw new Error('ObservedRedlock: the history needs the default monotonic clock');
    super(clients, options);
    this.#observer = observer;
  }

  override async acquire(resources: Resources, ttlMs: number, options?: AcquireOptions): Promise<Lock> {
    return this.#handedOver(await super.acquire(resources, ttlMs, options));
  }

  override async tryAcquire(resources: Resources, ttlMs: number, options?: TryAcquireOptions): Promise<Lock | null> {
    const lock = await super.tryAcquire(resources, ttlMs, options);
    return lock === null ? null : this.#handedOver(lock);
  }

  override using<T>(resources: Resources, ttlMs: number, routine: LockedRoutine<T>, options?: UsingOptions): Promise<T> {
    return super.using(resources, ttlMs, (signal, lock) => routine(signal, this.#handedOver(lock)), options);
  }

  protected override acquireOnNodes(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    return this.#observe('acquire', keys, value, ttlMs, () => this.acquireRound(keys, value, ttlMs, position, connectWait));
  }

  /**
   * The acquire round itself: the library's. Only a negative control's
   * locker overrides it (run/cheatingLocker.ts), to break a rule on purpose
   * and show the checker catches the grant it then records.
   */
  protected acquireRound(
    keys: readonly string[],
    value: string,
    ttlMs: number,
    position: LinePosition | undefined,
    connectWait: ConnectWait,
  ): Promise<Grant> {
    return super.acquireOnNodes(keys, value, ttlMs, position, connectWait);
  }

  protected override handedOffGrant(...args: Parameters<Redlock['handedOffGrant']>): Promise<Grant> {
    const [keys, value, ttlMs] = args;
    return this.#observe('acquire', keys, value, ttlMs, () => super.handedOffGrant(...args), true);
  }

  /** A handed-off lock's claim of its full TTL is an extend of it, as the history sees it. */
  protected override claimOnNodes(...args: Parameters<Redlock['claimOnNodes']>): Promise<Grant> {
    const [keys, value, ttlMs] = args;
    return this.#observe('extend', keys, value, ttlMs, () => super.claimOnNodes(...args), true);
  }

  protected override extendOnNodes(keys: readonly string[], value: string, ttlMs: number, remainingMs: number): Promise<Grant> {
    return this.#observe('extend', keys, value, ttlMs, () => super.extendOnNodes(keys, value, ttlMs, remainingMs));
  }

  /** using()'s renewals go to the nodes in batches; each is still one extend of its lock in the history. */
  protected override renewOnNodes(renewals: readonly Renewal[]): void {
    const observed = renewals.map((renewal): Renewal => {
      let resolve: (grant: Grant) => void = () => undefined;
      let reject: (error: unknown) => void = () => undefined;
      const answered = new Promise<Grant>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      void this.#observe('extend', renewal.keys, renewal.value, renewal.ttlMs, () => answered).then(renewal.answer.resolve, renewal.answer.reject);
      return { keys: renewal.keys, value: renewal.value, ttlMs: renewal.ttlMs, remainingMs: renewal.remainingMs, answer: { resolve, reject } };
    });
    super.renewOnNodes(observed);
  }

  protected override async releaseOnNodes(keys: readonly string[], value: string, contended?: boolean, writesOut?: WritesOut): Promise<ReleaseResult> {
    const invokedAt = sharedNow();
    this.#observer.sink.releasing?.({ client: this.#observer.client, value, resources: [...keys], at: invokedAt });
    const result = await super.releaseOnNodes(keys, value, contended, writesOut);
    this.#emit('release', keys, value, undefined, invokedAt, { result: 'ok', nodes: result.outcomes, released: result.released });
    return result;
  }

  async #observe(
    kind: OpKind,
    keys: readonly string[],
    value: string,
    ttlMs: number,
    round: () => Promise<Grant>,
    handedOff?: true,
  ): Promise<Grant> {
    const invokedAt = sharedNow();
    let grant: Grant;
    try {
      grant = await round();
    } catch (error) {
      this.#emit(kind, keys, value, ttlMs, invokedAt, {
        result: resultOf(error),
        nodes: outcomesOf(error),
        errorCode: isQuorumLockError(error) ? error.code : String(error),
        ...(handedOff ? { handedOff } : {}),
      });
      throw error;
    }
    this.#emit(kind, keys, value, ttlMs, invokedAt, {
      result: 'ok',
      nodes: grant.outcomes,
      validUntil: fromMonotonic(grant.validUntil),
      ...(grant.fencingTokens === undefined ? {} : { fencingTokens: grant.fencingTokens.map(String) }),
      ...(handedOff ? { handedOff } : {}),
    });
    return grant;
  }

  #emit(
    kind: OpKind,
    keys: readonly string[],
    value: string,
    ttlMs: number | undefined,
    invokedAt: number,
    outcome: {
      result: OpResult;
      nodes: readonly NodeOutcome[];
      errorCode?: string;
      validUntil?: number;
      released?: number;
      fencingTokens?: readonly string[];
      handedOff?: true;
    },
  ): void {
    const completedAt = sharedNow();
    const { client, sink } = this.#observer;
    this.#seq += 1;
    sink.op({
      id: `${client}#${this.#seq}`,
      client,
      kind,
      resources: [...keys],
      value,
      ...(ttlMs === undefined ? {} : { ttlMs }),
      quorum: this.quorum,
      invokedAt,
      completedAt,
      ...outcome,
      nodes: outcome.nodes.map((n) => this.#nodeRecord(n)),
    });
  }

  #nodeRecord(outcome: NodeOutcome): NodeOutcomeRecord {
    const node = this.#observer.nodeNames?.get(outcome.node) ?? outcome.node;
    return outcome.error === undefined
      ? { node, status: outcome.status, ms: outcome.ms }
      : { node, status: outcome.status, ms: outcome.ms, error: outcome.error.message };
  }

  #handedOver(lock: Lock): Lock {
    if (this.#handed.has(lock)) return lock;
    this.#handed.add(lock);
    const tokens = lock.fencingTokens;
    this.#observer.sink.handover({
      client: this.#observer.client,
      value: lock.value,
      at: sharedNow(),
      ...(tokens === undefined ? {} : { fencingTokens: tokens.map(String) }),
    });
    return lock;
  }
}

function resultOf(error: unknown): OpResult {
  if (!isQuorumLockError(error)) return 'error';
  switch (error.code) {
    case ErrorCode.LOCK_HELD:
      return 'held';
    case ErrorCode.QUORUM_UNREACHABLE:
      return 'unreachable';
    case ErrorCode.VALIDITY_EXHAUSTED:
      return 'exhausted';
    case ErrorCode.LOCK_LOST:
      return 'lost';
    case ErrorCode.ABORTED:
      return 'aborted';
    default:
      return 'error';
  }
}

function outcomesOf(error: unknown): readonly NodeOutcome[] {
  const outcomes: unknown = (error as { outcomes?: unknown } | null)?.outcomes;
  return Array.isArray(outcomes) ? (outcomes as NodeOutcome[]) : [];
}
