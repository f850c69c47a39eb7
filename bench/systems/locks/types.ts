/**
 * The shape every system's lock takes in `npm run bench:systems`: a process
 * opens its system once (clients, sessions), makes a holder per waiter (the
 * identity a lock is held by: an etcd session, a Postgres connection), and
 * each holder takes locks by name.
 */

export interface Held {
  release(): Promise<void>;
}

export interface Holder {
  /** Waits until the lock called `name` is this holder's. */
  acquire(name: string): Promise<Held>;
}

export interface LockSystem {
  /** A holder of its own (waiters of one process that must exclude each other each take one). */
  holder(): Promise<Holder>;
  close(): Promise<void>;
}

/** Everything a process needs to open a system: sent to worker processes as JSON. */
export type SystemSpec =
  | { readonly system: 'etcd'; readonly endpoints: readonly string[]; readonly ttlSec: number }
  | { readonly system: 'zookeeper'; readonly connectString: string; readonly sessionTimeoutMs: number }
  | { readonly system: 'postgres'; readonly url: string }
  | {
      readonly system: 'redis';
      readonly kind: 'RedisLock' | 'Redlock';
      readonly libraryUrl: string;
      readonly ttlMs: number;
      /** Standalone nodes (one for RedisLock, several for Redlock)... */
      readonly urls?: readonly string[];
      /** ...or one Sentinel-managed group. */
      readonly sentinel?: { readonly sentinels: readonly { host: string; port: number }[]; readonly name: string };
      /** Replicas of each node that must acknowledge a grant (quorumlock's syncReplicas). */
      readonly syncReplicas?: number;
    };
