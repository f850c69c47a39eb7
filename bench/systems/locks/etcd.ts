/**
 * etcd's lock as its users take it: the recipe of etcd's own Go client
 * (clientv3/concurrency Mutex), written with etcd3's primitives. etcd3's own
 * Lock class is not that recipe: it is a try-lock (a put if the key's create
 * revision is 0) that fails at once when the key is held, with no waiting.
 *
 * Each holder is a session: a lease kept alive by etcd3. To lock `name`, it
 * puts `name/<lease id>` under that lease (if it is not there yet) and reads
 * the oldest key under the prefix in the same transaction; the lock is its
 * when its own key has the lowest create revision. Otherwise it waits for the
 * deletion of the key with the next lower create revision, and again, until
 * none is left below its own. Releasing deletes the key; a dead holder's key
 * goes when its lease runs out (ttlSec after its last keep-alive).
 */
import { Etcd3, type Lease, Range } from 'etcd3';
import type { Held, Holder, LockSystem } from './types.js';

export async function openEtcd(endpoints: readonly string[], ttlSec: number): Promise<LockSystem> {
  const client = new Etcd3({ hosts: [...endpoints] });
  const leases: Lease[] = [];
  return {
    async holder() {
      const lease = client.lease(ttlSec);
      leases.push(lease);
      const id = await lease.grant();
      return new EtcdHolder(client, id);
    },
    async close() {
      await Promise.all(leases.map((lease) => lease.revoke().catch(() => undefined)));
      client.close();
    },
  };
}

class EtcdHolder implements Holder {
  readonly #hexId: string;

  constructor(
    private readonly client: Etcd3,
    private readonly leaseId: string,
  ) {
    this.#hexId = BigInt(leaseId).toString(16);
  }

  async acquire(name: string): Promise<Held> {
    const prefix = `${name}/`;
    const key = `${prefix}${this.#hexId}`;
    const client = this.client;
    const txn = await client
      .if(key, 'Create', '==', 0)
      .then(client.put(key).value('').lease(this.leaseId), client.getAll().prefix(prefix).sort('Create', 'Ascend').limit(1))
      .else(client.get(key))
      .commit();
    const ownRevision = txn.succeeded
      ? BigInt(txn.header.revision)
      : BigInt(txn.responses[0]?.response_range?.kvs[0]?.create_revision ?? '0');
    const oldest = txn.succeeded ? txn.responses[1]?.response_range?.kvs[0] : undefined;
    if (oldest === undefined || BigInt(oldest.create_revision) !== ownRevision) await this.#waitForOlder(prefix, ownRevision);
    return { release: async () => void (await client.delete().key(key)) };
  }

  /** Until no key under `prefix` was created before `ownRevision`: each time, the deletion of the youngest of them. */
  async #waitForOlder(prefix: string, ownRevision: bigint): Promise<void> {
    const range = Range.prefix(prefix);
    for (;;) {
      const older = await this.client.kv.range({
        key: range.start,
        range_end: range.end,
        sort_target: 'Create',
        sort_order: 'Descend',
        limit: 1,
        max_create_revision: String(ownRevision - 1n),
      });
      const next = older.kvs[0];
      if (next === undefined) return;
      await this.#deleted(next.key, BigInt(older.header.revision) + 1n);
    }
  }

  /** Resolves when `key` is deleted at or after `fromRevision` (a deletion in between is replayed). */
  async #deleted(key: Buffer, fromRevision: bigint): Promise<void> {
    const watcher = await this.client.watch().key(key).startRevision(String(fromRevision)).only('delete').create();
    try {
      await new Promise<void>((resolve, reject) => {
        watcher.once('delete', () => resolve());
        watcher.once('error', reject);
      });
    } finally {
      await watcher.cancel().catch(() => undefined);
    }
  }
}
