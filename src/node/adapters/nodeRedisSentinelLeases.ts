import type { ClientAdapter, SyncConnection, SyncSource } from '../ClientAdapter.js';

/** A master connection leased from a node-redis Sentinel client's pool (`acquire()`), as far as quorumlock uses it. */
interface MasterLease {
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  release(): unknown;
}

/** The part of a node-redis Sentinel client (v5, v6) that leases its master connections. */
export interface LeasingSentinel {
  readonly isOpen: boolean;
  readonly isReady?: boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  acquire?(): Promise<MasterLease>;
  _execute?(isReadonly: boolean | undefined, fn: (client: unknown) => Promise<unknown>): Promise<unknown>;
}

/**
 * Synced writes of a node-redis Sentinel client on master connections leased
 * from its pool (`acquire()`), one lease per connection's batch (its writes
 * and their WAIT), given back once the WAIT has answered: a WAIT then blocks
 * a leased connection, never the one the client's other commands use.
 *
 * That holds only when the client's own commands do not need the leased
 * connection: with `reserveClient: true` and `masterPoolSize` of 2 or more.
 * node-redis keeps both options private, so the first synced write asks the
 * client itself: holding a lease, is a command of the client still sent?
 * With one master connection it waits for the lease (a lease would stall
 * every command of the client), and with the one connection reserved no
 * lease is given at all; in both cases the writes and their WAIT go on the
 * client's connection, back to back, as on any client without a pool (see
 * README, Replica sync). Without `reserveClient`, node-redis 5 and 6 lose
 * track of their leases once commands overlap (a burst of five PINGs never
 * answered here with `masterPoolSize: 2`), so that setting is not supported.
 *
 * `adapterFor` builds the adapter a lease's writes run on; `mark` changes
 * with the client's master connection (a new master or a reconnect).
 */
export function sentinelLeaseSource(
  sentinel: LeasingSentinel,
  adapterFor: (send: (args: string[]) => Promise<unknown>) => ClientAdapter,
  mark: () => unknown,
): SyncSource {
  let leasing: Promise<boolean> | undefined;
  const leasesServeAlone = (): Promise<boolean> => {
    if (leasing) return leasing;
    // A client that fails the question (closed meanwhile) keeps its writes on its own connection.
    const asked = leasesLeaveClientFree(sentinel).catch(() => false);
    // Asked of a client not yet ready, the answer may be its reconnect's, not its settings': asked again next time.
    if (sentinel.isReady === false) return asked;
    leasing = asked;
    return asked;
  };
  return {
    ended: () => !sentinel.isOpen,
    onEnd: (listener) => void sentinel.on('end', listener),
    open: (): SyncConnection => {
      let lease: Promise<MasterLease | undefined> | undefined;
      const leased = (): Promise<MasterLease | undefined> =>
        (lease ??= leasesServeAlone().then((alone) => (alone && sentinel.acquire ? sentinel.acquire() : undefined)));
      // Every command of a batch is chained on the same lease, in the order sent: the WAIT follows the writes on it.
      const send = (args: string[]): Promise<unknown> =>
        leased().then((on) => (on ? on.sendCommand(false, args) : sentinel.sendCommand(false, args)));
      const giveBack = (): void => {
        const held = lease;
        lease = undefined;
        // A lease of a client that has ended may refuse to go back; nothing is left to do with it then.
        held?.then((on) => on?.release()).catch(() => undefined);
      };
      return {
        client: adapterFor(send),
        wait: (replicas, timeoutMs) => {
          const asked = performance.now();
          return leased()
            .then(() => {
              // The request's deadline runs from before the lease was asked for, WAIT's server-side
              // timeout only from when the WAIT reaches the server: the time the lease took (its
              // first connection, the probe above: 0.8-1 s of a 2.7 s request on a loaded 2-core
              // host) comes off WAIT's timeout, so that it still answers within the request's
              // deadline, as waitTimeoutMs reckons, and a short sync is REPLICA_SYNC, not NODE_TIMEOUT.
              const leftMs = Math.max(1, Math.floor(timeoutMs - (performance.now() - asked)));
              return send(['WAIT', String(replicas), String(leftMs)]);
            })
            .then(Number);
        },
        mark,
        idle: giveBack,
        close: giveBack,
      };
    },
  };
}

/**
 * Holding a lease, does a command of the client still reach a connection?
 * It does at once on a reserved connection (`reserveClient`); with one
 * master connection it waits for the lease, and with that one reserved no
 * lease comes. Decided within one turn of the event loop.
 */
async function leasesLeaveClientFree(sentinel: LeasingSentinel): Promise<boolean> {
  if (!sentinel.acquire || !sentinel._execute) return false;
  const acquiring = sentinel.acquire();
  const lease = await Promise.race([acquiring, nextTurn().then(() => undefined)]);
  if (lease === undefined) {
    // Given later, when nobody waits for it any more: back at once.
    acquiring.then((late) => late.release()).catch(() => undefined);
    return false;
  }
  let reached = false;
  const probe = sentinel._execute(false, () => {
    reached = true;
    return Promise.resolve();
  });
  await nextTurn();
  // Read before the lease goes back: a command that waited for it runs right after.
  const alone = reached;
  lease.release();
  await probe.catch(() => undefined);
  return alone;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
