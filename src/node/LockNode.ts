import type { Clock } from '../clock/Clock.js';
import { NodeTimeoutError } from '../lock/errors.js';
import type { NodeBackend } from './NodeBackend.js';
import type { NodeOutcome, NodeStatus } from './outcome.js';

export interface ReleaseOutcome extends NodeOutcome {
  /** Keys deleted on this node (0 for expired, foreign, error or timeout). */
  readonly released: number;
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

  acquire(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    return this.call(timeoutMs, () => this.backend.acquire(keys, value, ttlMs), (ok) => (ok ? 'ok' : 'held'));
  }

  extend(keys: readonly string[], value: string, ttlMs: number, timeoutMs: number): Promise<NodeOutcome> {
    return this.call(timeoutMs, () => this.backend.extend(keys, value, ttlMs), (ok) => (ok ? 'ok' : 'held'));
  }

  async release(keys: readonly string[], value: string, timeoutMs: number): Promise<ReleaseOutcome> {
    let released = 0;
    const outcome = await this.call(
      timeoutMs,
      () => this.backend.release(keys, value),
      (count) => {
        released = count;
        return count > 0 ? 'ok' : 'held';
      },
    );
    return { ...outcome, released };
  }

  private call<T>(timeoutMs: number, request: () => Promise<T>, interpret: (reply: T) => NodeStatus): Promise<NodeOutcome> {
    const node = this.name;
    const clock = this.clock;
    const sentAt = clock.now();
    return new Promise<NodeOutcome>((resolve) => {
      let settled = false;
      const finish = (status: NodeStatus, error?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const ms = clock.now() - sentAt;
        resolve(error ? { node, status, ms, error } : { node, status, ms });
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
          finish(status);
        },
        (error: unknown) => finish('error', asError(error)),
      );
    });
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
