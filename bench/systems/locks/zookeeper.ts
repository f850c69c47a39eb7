/**
 * ZooKeeper's lock recipe (the "Locks" recipe of ZooKeeper's documentation,
 * as Curator's InterProcessMutex takes it) through node-zookeeper-client:
 * create an ephemeral sequential znode under the lock's node; the lock is
 * ours when ours has the lowest sequence number; otherwise watch the znode
 * just below ours (not the parent: no herd wakes on each release) and look
 * again when it goes. Releasing deletes our znode; a dead holder's goes when
 * its session expires (sessionTimeoutMs after its last heartbeat).
 *
 * node-zookeeper-client (pure JavaScript) rather than the native `zookeeper`
 * package: that one builds ZooKeeper's C client at install time (no Linux
 * prebuild ships), which needs a toolchain and an install script npm is told
 * to run; both are protocol-complete for this recipe.
 *
 * Every holder of one process shares its session: znodes are per create, so
 * two waiters of one session still queue one behind the other.
 */
import zookeeper from 'node-zookeeper-client';
import type { Held, Holder, LockSystem } from './types.js';

const ROOT = '/qlbench-locks';

type Client = zookeeper.Client;

export async function openZooKeeper(connectString: string, sessionTimeoutMs: number): Promise<LockSystem> {
  const client = zookeeper.createClient(connectString, { sessionTimeout: sessionTimeoutMs, spinDelay: 100, retries: 3 });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ZooKeeper at ${connectString}: not connected within 20 s`)), 20_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  const holder = new ZooKeeperHolder(client);
  return {
    holder: async () => holder,
    async close() {
      client.close();
    },
  };
}

class ZooKeeperHolder implements Holder {
  /** Lock nodes this process has seen exist: their parent is created once, as Curator's container parents are. */
  readonly #parents = new Set<string>();

  constructor(private readonly client: Client) {}

  async acquire(name: string): Promise<Held> {
    const parent = `${ROOT}/${name}`;
    const path = await this.#createOwn(parent);
    const own = path.slice(parent.length + 1);
    for (;;) {
      const children = (await call<string[]>((cb) => this.client.getChildren(parent, cb))).sort(bySequence);
      const index = children.indexOf(own);
      if (index === -1) throw new Error(`ZooKeeper: our lock node ${path} is gone (session expired)`);
      if (index === 0) break;
      await this.#deleted(`${parent}/${children[index - 1]}`);
    }
    return { release: () => call<void>((cb) => this.client.remove(path, -1, cb)) };
  }

  async #createOwn(parent: string): Promise<string> {
    const create = () =>
      call<string>((cb) => this.client.create(`${parent}/lock-`, Buffer.alloc(0), zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL, cb));
    if (!this.#parents.has(parent)) {
      await call<string>((cb) => this.client.mkdirp(parent, cb));
      this.#parents.add(parent);
    }
    return create();
  }

  /** Resolves once `path` no longer exists (at once if it is already gone). */
  #deleted(path: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.client.exists(
        path,
        () => resolve(),
        (error, stat) => {
          if (error) reject(error);
          else if (!stat) resolve();
        },
      );
    });
  }
}

/** Sequence numbers are the last 10 digits of a sequential znode's name. */
function bySequence(a: string, b: string): number {
  return a.slice(-10).localeCompare(b.slice(-10));
}

function call<T>(run: (callback: (error: Error | zookeeper.Exception | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => run((error, value) => (error ? reject(error) : resolve(value))));
}
