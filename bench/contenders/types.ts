import type { Redis } from 'ioredis';
import type { ClientKind } from '../clients.js';

/** A lock this benchmark holds; the contender's own handle behind it. */
export interface HeldLock {
  release(): Promise<unknown>;
}

/**
 * One library, configured, over one set of nodes, reduced to what the
 * scenarios need. Each adapter calls the library the way its README shows.
 */
export interface BenchLocker {
  /**
   * Waits for `key` per the library's own retry policy. Resolves null when
   * the library gave up (its retry limit or acquire timeout) or when `signal`
   * aborted (for libraries that take a signal); rejects on any other failure.
   */
  acquire(key: string, ttlMs: number, signal: AbortSignal): Promise<HeldLock | null>;
}

export type Variant = 'defaults' | 'best';

export interface Contender {
  /** Library id: 'raw', 'quorumlock', 'node-redlock', 'sesame-redlock', 'redis-semaphore'. */
  readonly library: string;
  readonly variant: Variant;
  /** The settings in words, for the report. */
  readonly settings: string;
  /** The raw floor, quorumlock (and a candidate build of it) are not peers. */
  readonly role: 'floor' | 'ours' | 'candidate' | 'peer';
  /**
   * Scenario kinds in which this variant behaves differently from the
   * library's defaults; elsewhere it would only repeat them and is skipped.
   */
  readonly differsIn?: readonly ('uncontended' | 'contended')[];
  /** The client its library is given; ioredis when absent. */
  readonly client?: ClientKind;
  /** Measured only when named with --contender: the client matrix's entrants stay out of the default run. */
  readonly onlyWhenNamed?: boolean;
  /** The class a user would pick for this many nodes, e.g. 'Mutex' or 'RedlockMutex'. */
  className(nodeCount: number): string;
  /** `clients`: one client per node, owned by the runner; node-redis clients when `client` says so (ClientGroup). */
  create(clients: readonly Redis[]): BenchLocker;
}

/** `library:variant`, unique within a run. */
export function contenderKey(c: Pick<Contender, 'library' | 'variant'>): string {
  return `${c.library}:${c.variant}`;
}
