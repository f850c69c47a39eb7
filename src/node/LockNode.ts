import type { Clock } from '../clock/Clock.js';
import { NodeTimeoutError } from '../lock/errors.js';
import type { NodeBackend } from './NodeBackend.js';
import type { NodeOutcome, NodeStatus } from './outcome.js';
import { RequestDeadline } from './RequestDeadline.js';

export interface ReleaseOutcome extends NodeOutcome {
  /** Keys deleted on this node (0 for expired, foreign, error or timeout). */
  readonly released: number;
}

export interface FencedOutcome extends NodeOutcome {
  /** With status `ok`: this node's token for each resource. */
  readonly tokens?: readonly bigint[];
}

/** Turns a reply (undefined after an error or timeout) into the outcome a caller wants. */
type Describe<T, O> = (status: NodeStatus, ms: number, reply: T | undefined, error: Error | undefined) => O;

/**
 * How long a request may take: a number of milliseconds, or the deadline it
 * shares with the requests sent with it to the other nodes.
 */
export type RequestLimit = number | RequestDeadline;

/**
 * One node as the coordinator sees it: every request has a timeout and
 * ends in a NodeOutcome, never a rejection. The timeout is ours, not the
 * client's, so a dead node cannot stall a call even while ioredis keeps the
 * command in its offline queue. A reply that comes after the timeout is
 * ignored: it never counts as success.
 */
export class LockNode {
  constructor(
    readonly backend: NodeBackend,
    private readonly clock: Clock,
  ) {}

  get name(): string {
    return this.backend.name;
  }

  acquire(keys: readonly string[], value: string, ttlMs: number, limit: RequestLimit): Promise<NodeOutcome> {
    return this.call(limit, () => this.backend.acquire(keys, value, ttlMs), okOrHeld, this.#plain);
  }

  acquireFenced(keys: readonly string[], value: string, ttlMs: number, limit: RequestLimit): Promise<FencedOutcome> {
    return this.call(
      limit,
      () => this.backend.acquireFenced!(keys, value, ttlMs),
      (tokens) => (tokens ? 'ok' : 'held'),
      (status, ms, tokens, error): FencedOutcome =>
        tokens ? { node: this.name, status, ms, tokens } : this.#plain(status, ms, undefined, error),
    );
  }

  fence(keys: readonly string[], value: string, tokens: readonly bigint[], limit: RequestLimit): Promise<NodeOutcome> {
    return this.call(limit, () => this.backend.fence!(keys, value, tokens), okOrHeld, this.#plain);
  }

  extend(keys: readonly string[], value: string, ttlMs: number, limit: RequestLimit): Promise<NodeOutcome> {
    return this.call(limit, () => this.backend.extend(keys, value, ttlMs), okOrHeld, this.#plain);
  }

  /** `undo`: cleaning up a failed attempt (see NodeBackend.release). */
  release(keys: readonly string[], value: string, limit: RequestLimit, undo = false): Promise<ReleaseOutcome> {
    return this.call(
      limit,
      () => this.backend.release(keys, value, undo),
      (count) => (count > 0 ? 'ok' : 'held'),
      (status, ms, count, error): ReleaseOutcome =>
        error ? { node: this.name, status, ms, error, released: 0 } : { node: this.name, status, ms, released: count ?? 0 },
    );
  }

  // Outcomes are built field by field: object rest/spread here was a visible
  // share of an uncontended acquire on five nodes.
  readonly #plain = (status: NodeStatus, ms: number, _reply: unknown, error: Error | undefined): NodeOutcome =>
    error ? { node: this.name, status, ms, error } : { node: this.name, status, ms };

  private call<T, O>(
    limit: RequestLimit,
    request: () => Promise<T>,
    interpret: (reply: T) => NodeStatus,
    describe: Describe<T, O>,
  ): Promise<O> {
    const clock = this.clock;
    const deadline = typeof limit === 'number' ? new RequestDeadline(clock, limit) : limit;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (status: NodeStatus, reply: T | undefined, error: Error | undefined): void => {
        if (settled) return;
        settled = true;
        untrack();
        resolve(describe(status, clock.now() - deadline.sentAt, reply, error));
      };
      const untrack = deadline.track(() =>
        finish('timeout', undefined, new NodeTimeoutError(this.name, deadline.timeoutMs)),
      );
      let pending: Promise<T>;
      try {
        pending = request();
      } catch (error) {
        finish('error', undefined, asError(error));
        return;
      }
      pending.then(
        (reply) => {
          if (settled) return;
          let status: NodeStatus;
          try {
            status = interpret(reply);
          } catch (error) {
            finish('error', undefined, asError(error));
            return;
          }
          finish(status, reply, undefined);
        },
        (error: unknown) => finish('error', undefined, asError(error)),
      );
    });
  }
}

function okOrHeld(ok: boolean): NodeStatus {
  return ok ? 'ok' : 'held';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
