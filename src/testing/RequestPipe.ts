/**
 * One connection to the in-memory node, with faults planned per request:
 * requests are applied in the order they were sent and replies come back in
 * that order, whatever the delays, as on one Redis connection. Delays run on
 * setTimeout, so tests that use them drive time with fake timers and give
 * the node a clock that reads the same fake time.
 */
import { holdProcessOpen, holdProcessOpenFor } from './keepAlive.js';
import type { SimulatedOperation } from './scriptOps.js';
import type { StringChange } from './keyspace/Keyspace.js';
import type { Reply } from './lua/replies.js';

/**
 * What happens to one request:
 * - 'reply': applied, then answered;
 * - 'lose-reply': applied, the reply never comes (a dropped reply, a partition after the request);
 * - 'fail-before': rejected without being applied (connection refused or reset before sending);
 * - 'fail-after': applied, then rejected (connection reset after the request was applied).
 */
export type RequestFate = 'reply' | 'lose-reply' | 'fail-before' | 'fail-after';

/** One request's delays and fate. */
export interface RequestPlan {
  /** Milliseconds from sending until the node applies it (later if an earlier request is still queued). @default 0 */
  readonly applyAfterMs?: number;
  /** Milliseconds from applying until the reply (or the failure) reaches the caller. @default 0 */
  readonly replyAfterMs?: number;
  /** @default 'reply' */
  readonly fate?: RequestFate;
}

/** A request as the planner sees it when it is sent. */
export interface SimulatedRequest {
  /** 1, 2, 3, ... in the order requests were sent to this node. */
  readonly seq: number;
  /** What it does (a script's operation, or 'command'). */
  readonly op: SimulatedOperation;
  /** The command's name (EVALSHA, EVAL, SET, GET, …). */
  readonly command: string;
  /** The keys it names. */
  readonly keys: readonly string[];
  /** The holder's value it carries ('' when it carries none, or several). */
  readonly value: string;
  /** Every holder's value it carries (a batch of renewals carries several). */
  readonly values: readonly string[];
  /** The TTL it asks for, when it is an acquire or an extend. */
  readonly ttlMs?: number;
}

/** Decides each request's delays and fate; the default applies and answers at once. */
export type RequestPlanner = (request: SimulatedRequest) => RequestPlan;

/** What became of a request, filled in as it progresses. */
export interface RequestRecord extends SimulatedRequest {
  /** The plan it followed. */
  readonly plan: Required<RequestPlan>;
  /** Node-clock instant it was applied, if it was. */
  appliedAt?: number;
  /** The reply the node gave, if applied (an error reply as `{ error }`). */
  result?: Reply;
  /** String keys the request wrote or deleted, with their values before and after. */
  changed?: readonly StringChange[];
  /** Why it was not applied or not answered. */
  failure?: string;
}

/** How long a lost reply holds the process open: far past any node timeout a test would set (default 50 ms). */
const LOST_REPLY_HOLD_MS = 1000;

export const ANSWER_AT_ONCE: Required<RequestPlan> = Object.freeze({ applyAfterMs: 0, replyAfterMs: 0, fate: 'reply' });

/** Why a request to the node failed: a broken connection, a node that is down, a planned failure. */
export class InMemoryNodeError extends Error {
  /** `node`: the node's name; `problem`: what happened to the request. */
  constructor(node: string, problem: string) {
    super(`${node}: ${problem}`);
    this.name = 'InMemoryNodeError';
  }
}

/** What the pipe needs of its node. */
export interface PipeNode {
  readonly name: string;
  planner: RequestPlanner;
  readonly requests: RequestRecord[];
  /** Bumped by restart(): requests from an older epoch are never applied or answered. */
  readonly epoch: number;
  readonly isDown: boolean;
  now(): number;
}

export class RequestPipe {
  #seq = 0;
  /** Resolves when the previously sent request has been applied (or dropped). */
  #applyTail: Promise<void> = Promise.resolve();
  /** Resolves when the previous reply has been delivered (or dropped). */
  #replyTail: Promise<void> = Promise.resolve();

  constructor(private readonly node: PipeNode) {}

  /** Sends one request; `apply` runs it on the node when its turn and delay come. */
  send(request: Omit<SimulatedRequest, 'seq'>, apply: () => { result: Reply; changed: readonly StringChange[] }, ready?: Promise<unknown>): Promise<Reply> {
    const node = this.node;
    const sent: SimulatedRequest = { ...request, seq: ++this.#seq };
    const plan: Required<RequestPlan> = { ...ANSWER_AT_ONCE, ...node.planner(sent) };
    const record: RequestRecord = { ...sent, keys: [...sent.keys], plan };
    node.requests.push(record);
    const epoch = node.epoch;

    const waits: Promise<unknown>[] = [this.#applyTail, delay(plan.applyAfterMs)];
    if (ready) waits.push(ready);
    const applied = Promise.all(waits).then(() => {
      if (epoch !== node.epoch) return (record.failure = 'connection lost in a restart before it was applied');
      if (plan.fate === 'fail-before') return (record.failure = 'failed before it was applied');
      if (node.isDown) return (record.failure = 'node down after a restart');
      try {
        const { result, changed } = apply();
        record.appliedAt = node.now();
        record.result = result;
        record.changed = changed;
      } catch (error) {
        record.failure = error instanceof Error ? error.message : String(error);
      }
      return undefined;
    });
    this.#applyTail = applied.then(() => undefined);

    const answered = Promise.all([applied, this.#replyTail, applied.then(() => delay(plan.replyAfterMs))]);
    this.#replyTail = answered.then(() => undefined);

    // Open until answered, as a client's socket with a command on it.
    const letGo = holdProcessOpen();
    return new Promise<Reply>((resolve, reject) => {
      void answered.then(() => {
        letGo();
        if (plan.fate === 'lose-reply') return holdProcessOpenFor(LOST_REPLY_HOLD_MS);
        if (epoch !== node.epoch) reject(new InMemoryNodeError(node.name, 'connection reset (node restarted)'));
        else if (record.failure !== undefined) reject(new InMemoryNodeError(node.name, record.failure));
        else if (plan.fate === 'fail-after') reject(new InMemoryNodeError(node.name, 'connection reset after the request was applied'));
        else resolve(record.result as Reply);
      });
    });
  }
}

/** A zero delay stays off the timer queue, so instant nodes need no timers at all. */
function delay(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
