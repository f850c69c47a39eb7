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

  async acquire(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    const { reply: _, ...outcome } = await this.call(timeoutMs, () => this.backend.acquire(keys, value, ttlMs), okOrHeld);
    return outcome;
  }

  async acquireFenced(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<FencedOutcome> {
    const { reply, ...outcome } = await this.call(
      timeoutMs,
      () => this.backend.acquireFenced!(keys, value, ttlMs),
      (tokens) => (tokens ? 'ok' : 'held'),
    );
    return reply ? { ...outcome, tokens: reply } : outcome;
  }

  async fence(keys: readonly string[], value: string, tokens: readonly bigint[], timeoutMs: number): Promise<NodeOutcome> {
    const { reply: _, ...outcome } = await this.call(timeoutMs, () => this.backend.fence!(keys, value, tokens), okOrHeld);
    return outcome;
  }

  async extend(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    const { reply: _, ...outcome } = await this.call(timeoutMs, () => this.backend.extend(keys, value, ttlMs), okOrHeld);
    return outcome;
  }

  async release(keys: readonly string[], value: string, timeoutMs: number): Promise<ReleaseOutcome> {
    const { reply, ...outcome } = await this.call(timeoutMs, () => this.backend.release(keys, value), (count) =>
      count > 0 ? 'ok' : 'held',
    );
    return { ...outcome, released: reply ?? 0 };
  }

  /** Resolves with the outcome, and the reply when it came in time. */
  private call<T>(
    timeoutMs: number,
    request: () => Promise<T>,
    interpret: (reply: T) => NodeStatus,
  ): Promise<NodeOutcome & { reply?: T }> {
    const node = this.name;
    const clock = this.clock;
    const sentAt = clock.now();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (status: NodeStatus, error?: Error, reply?: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const ms = clock.now() - sentAt;
        if (error) resolve({ node, status, ms, error });
        else resolve({ node, status, ms, reply });
      };
      const timer = setTimeout(() => finish('timeout', new NodeTimeoutError(node, timeoutMs)), timeoutMs);
      timer.unref();
      let pending: Promise<T>;
      try {
        pending = request();
      } catch (error) {
        finish('error', asError(error));
        return;
      }
      pending.then(
        (reply) => {
          if (settled) return;
          let status: NodeStatus;
          try {
            status = interpret(reply);
          } catch (error) {
            finish('error', asError(error));
            return;
          }
          finish(status, undefined, reply);
        },
        (error: unknown) => finish('error', asError(error)),
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
