import { InvalidArgumentError } from '../shared/errors.js';
import { type LockerOptions, resolveLockerOptions } from '../lock/options.js';
import { describe } from '../shared/describe.js';
import { backendFor, isLockClient, type LockClient } from '../node/backendFor.js';
import { LockNode } from '../node/LockNode.js';
import { QuorumCoordinator } from './QuorumCoordinator.js';

/** Options of Redlock: a locker's options ({@link LockerOptions}). */
export type RedlockOptions = LockerOptions;

/**
 * The Redlock algorithm over N independent Redis nodes (not replicas of each
 * other): a lock is granted when floor(N / 2) + 1 nodes took it and validity
 * is left after the round trips and the clock-drift allowance.
 */
export class Redlock extends QuorumCoordinator {
  /**
   * @param clients - One client per independent node (ioredis, node-redis,
   * Valkey GLIDE or InMemoryNode, mixed as you like); N nodes need
   * floor(N / 2) + 1 votes.
   * @param options - Drift, timeouts, retry, fencing, wake-up, reentrancy, replica sync, clock.
   * @throws {@link InvalidArgumentError} for an empty array, a client given
   * twice, a value that is no client quorumlock knows, or a bad option.
   */
  constructor(clients: readonly LockClient[], options?: RedlockOptions) {
    const settings = resolveLockerOptions(options);
    super(toNodes(clients, settings.clock), settings);
  }
}

export function toNodes(clients: unknown, clock: { now(): number }): LockNode[] {
  if (!Array.isArray(clients) || clients.length === 0) {
    // A client describes itself as an EventEmitter, which would hide the slip.
    const got = isLockClient(clients)
      ? 'a client, not an array of them (new Redlock([client]), or new RedisLock(client) for one node)'
      : describe(clients);
    throw new InvalidArgumentError('clients', `expected a non-empty array of clients (ioredis or node-redis), got ${got}`);
  }
  const seen = new Map<unknown, number>();
  // Array.from visits the holes of a sparse array too, so each is named.
  return Array.from(clients as unknown[], (client: unknown, index) => {
    const argument = `clients[${index}]`;
    const backend = backendFor(client, argument);
    const first = seen.get(client);
    if (first !== undefined) {
      // The same connection twice would count one node's vote twice.
      throw new InvalidArgumentError(argument, `is the same client as clients[${first}]; each node must be independent`);
    }
    seen.set(client, index);
    return new LockNode(backend, clock);
  });
}
