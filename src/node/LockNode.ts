import type { Clock } from '../clock/Clock.js';
import { NodeTimeoutError } from '../lock/errors.js';
import type { NodeBackend } from './NodeBackend.js';
import type { NodeOutcome, NodeStatus } from './outcome.js';

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
 * One node as the coordinator sees it: every request gets its own timeout and
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

  acquire(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    return this.call(timeoutMs, () => this.backend.acquire(keys, value, ttlMs), okOrHeld, this.#plain);
  }

  acquireFenced(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<FencedOutcome> {
    return this.call(
      timeoutMs,
      () => this.backend.acquireFenced!(keys, value, ttlMs),
      (tokens) => (tokens ? 'ok' : 'held'),
      (status, ms, tokens, error): FencedOutcome =>
        tokens ? { node: this.name, status, ms, tokens } : this.#plain(status, ms, undefined, error),
    );
  }

  fence(keys: readonly string[], value: string, tokens: readonly bigint[], timeoutMs: number): Promise<NodeOutcome> {
    return this.call(timeoutMs, () => this.backend.fence!(keys, value, tokens), okOrHeld, this.#plain);
  }

  extend(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    return this.call(timeoutMs, () => this.backend.extend(keys, value, ttlMs), okOrHeld, this.#plain);
  }

  /** `undo`: cleaning up a failed attempt (see NodeBackend.release). */
  release(keys: readonly string[], value: string, timeoutMs: number, undo = false): Promise<ReleaseOutcome> {
    return this.call(
      timeoutMs,
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
    timeoutMs: number,
    request: () => Promise<T>,
    interpret: (reply: T) => NodeStatus,
    describe: Describe<T, O>,
  ): Promise<O> {
    const clock = this.clock;
    const sentAt = clock.now();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (status: NodeStatus, reply: T | undefined, error: Error | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(describe(status, clock.now() - sentAt, reply, error));
      };
      const timer = setTimeout(() => finish('timeout', undefined, new NodeTimeoutError(this.name, timeoutMs)), timeoutMs);
      timer.unref();
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
