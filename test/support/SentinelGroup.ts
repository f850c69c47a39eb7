/**
 * One Sentinel-managed Redis group as real processes: a master, its replicas
 * and three sentinels, on free loopback ports, with the failovers a user's
 * group goes through.
 *
 *   const group = await SentinelGroup.start({ replicas: 1, proxiedReplication: true });
 *   const client = group.client();          // ioredis, { sentinels, name }
 *   group.replicationLink(1)?.latencyMs = 100; // replica 1 replicates through a TcpProxy
 *   await group.failover('kill');           // kill -9 of the master, a replica promoted
 *   await group.failover('lossy');          // replication stalled, then kill -9: recent writes lost
 *   await group.stallReplication();         // ...or stall it first, write, then failover('lossy')
 *   await group.failover('pause');          // SIGSTOP of the master until a replica is promoted
 *   await group.failover('planned');        // SENTINEL FAILOVER
 *   afterAll(() => group.stop());
 *
 * Every process is a RedisServer, registered for a SIGKILL when the test
 * process exits.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { settleAll } from './nodeSet.js';
import { type Address, RedisServer } from './RedisServer.js';
import { TcpProxy } from './TcpProxy.js';

export type FailoverKind = 'kill' | 'pause' | 'lossy' | 'planned';

export interface SentinelGroupOptions {
  /** The master's name, as clients ask the sentinels for it. Default 'quorumlock'. */
  readonly name?: string;
  /** Replicas of the master. Default 1. */
  readonly replicas?: number;
  /**
   * Each initial replica replicates through a TcpProxy of its own
   * (replicationLink()), which a test can delay, stall or cut. A replica
   * promoted and demoted again replicates directly: the sentinels point it
   * at the new master's own address.
   */
  readonly proxiedReplication?: boolean;
  /**
   * Sentinels' down-after-milliseconds. Default 1000: a sentinel's new links
   * to a master it has just switched to answered only after 260-450 ms on a
   * loaded machine, and with 300 ms the sentinels failed the new master over
   * again 335 ms after the switch (its sentinel log: +switch-master, then
   * +sdown, +odown): the failover the test asked for was undone, and the
   * master that had been failed over from sat unconverted until a sentinel's
   * next 10-s look at it (an 11 s wait for the group to settle). 1000 ms is
   * twice the slowest link seen; a failover the harness induces detects its
   * dead master 0.7 s later than with 300.
   */
  readonly downAfterMs?: number;
  /**
   * Sentinels' failover-timeout. Default 3000: a sentinel sees the replica it
   * promoted only in its next INFO of it (once a second during a failover),
   * and on a loaded machine that came after a timeout of 1000 ms: the
   * sentinel aborted the failover, kept naming the old master, and turned the
   * promoted replica back into a replica of it 9 s later (two masters in the
   * meantime; the failover never finished). With proxied replication 60 s: a sentinel that sees a replica replicate from an address
   * other than the master's points it at the master itself
   * (+fix-slave-config), bypassing the proxy, once failover-timeout has
   * passed since the replica last changed.
   */
  readonly failoverTimeoutMs?: number;
  /** Longest wait for a failover to finish. Default 20 s. */
  readonly failoverDeadlineMs?: number;
}

export interface FailoverRecord {
  readonly kind: FailoverKind;
  /** Index in `servers` of the master before and after. */
  readonly from: number;
  readonly to: number;
  /** From the fault to all three sentinels naming the new master. */
  readonly ms: number;
}

const SENTINELS = 3;
/**
 * A replica's full sync starts at once instead of after Redis's default 5 s
 * wait for more replicas to share it: every failover ends in one.
 */
const SERVER_ARGS = ['--repl-diskless-sync-delay', '0'];
const POLL_MS = 25;
/** How long replication stays stalled before the master dies, in a lossy failover. */
const LOSSY_STALL_MS = 150;

/**
 * Commands to one process, for the harness's own bookkeeping (never a paused
 * one: they time out). Patient: the harness is not what a test measures, and
 * a CONFIG GET on a just-started master took over 1 s to connect and answer
 * while several groups started at once on 2 cores (a test then failed for
 * the harness's sake).
 */
const ADMIN_TIMEOUT_MS = 5000;

function adminClient(address: Address): Redis {
  const client = new Redis({
    host: address.host,
    port: address.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: true,
    commandTimeout: ADMIN_TIMEOUT_MS,
    connectTimeout: ADMIN_TIMEOUT_MS,
    retryStrategy: () => 100,
  });
  client.on('error', () => undefined);
  return client;
}

export class SentinelGroup {
  readonly name: string;
  /** Every data node; index 0 was the first master. */
  readonly servers: readonly RedisServer[];
  readonly sentinels: readonly RedisServer[];
  readonly failovers: FailoverRecord[] = [];
  readonly #links: readonly (TcpProxy | undefined)[];
  readonly #options: Required<SentinelGroupOptions>;
  readonly #clients = new Set<Redis>();
  #masterIndex = 0;
  #stalled = false;
  #stopping: Promise<void> | undefined;

  private constructor(
    options: Required<SentinelGroupOptions>,
    servers: RedisServer[],
    links: (TcpProxy | undefined)[],
    sentinels: RedisServer[],
  ) {
    this.#options = options;
    this.name = options.name;
    this.servers = servers;
    this.#links = links;
    this.sentinels = sentinels;
  }

  static async start(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
    const settings: Required<SentinelGroupOptions> = {
      name: options.name ?? 'quorumlock',
      replicas: options.replicas ?? 1,
      proxiedReplication: options.proxiedReplication ?? false,
      downAfterMs: options.downAfterMs ?? 1000,
      failoverTimeoutMs: options.failoverTimeoutMs ?? (options.proxiedReplication === true ? 60_000 : 3000),
      failoverDeadlineMs: options.failoverDeadlineMs ?? 20_000,
    };
    const master = new RedisServer({ extraArgs: SERVER_ARGS });
    const servers = [master];
    const links: (TcpProxy | undefined)[] = [undefined];
    const sentinels: RedisServer[] = [];
    const group = new SentinelGroup(settings, servers, links, sentinels);
    try {
      await master.start();
      for (let i = 0; i < settings.replicas; i++) {
        const link = settings.proxiedReplication ? await TcpProxy.start(master) : undefined;
        links.push(link);
        servers.push(new RedisServer({ replicaOf: link ?? master, extraArgs: SERVER_ARGS }));
      }
      await settleAll(servers.slice(1).map((server) => server.start()), 'SentinelGroup replicas');
      // A sentinel learns of the replicas from the master's INFO, which it reads once at its start and
      // then every 10 s: a replica not yet connected at that first read (five groups starting at once in
      // one test process, their replication proxies slowed) kept the group unsettled for those 10 s.
      await group.#until('the replicas to connect to the master', async () => {
        const connected = (await group.#replication(master))?.connectedReplicas ?? 0;
        return connected < settings.replicas ? `${connected} of ${settings.replicas} connected` : undefined;
      });
      const monitor = {
        name: settings.name,
        host: master.host,
        port: master.port,
        quorum: 2,
        downAfterMs: settings.downAfterMs,
        failoverTimeoutMs: settings.failoverTimeoutMs,
      };
      for (let i = 0; i < SENTINELS; i++) sentinels.push(new RedisServer({ sentinel: monitor }));
      await settleAll(sentinels.map((sentinel) => sentinel.start()), 'SentinelGroup sentinels');
      await group.waitUntilSettled();
    } catch (error) {
      await group.stop();
      throw error;
    }
    return group;
  }

  /** Where clients find the sentinels. */
  get sentinelAddresses(): Address[] {
    return this.sentinels.map((sentinel) => ({ host: sentinel.host, port: sentinel.port }));
  }

  /** The master as the harness last saw it settle. */
  get master(): RedisServer {
    return this.servers[this.#masterIndex] as RedisServer;
  }

  get masterIndex(): number {
    return this.#masterIndex;
  }

  /** The proxy server `index` replicates through, if it does. */
  replicationLink(index: number): TcpProxy | undefined {
    return this.#links[index];
  }

  /**
   * An ioredis client that finds the master through the sentinels; closed by
   * stop(). It drops its connection when a demoted master refuses a write
   * (READONLY) and finds the master again: what a user's Sentinel client
   * should do. Not `failoverDetector`: in ioredis 5.11 a switch announced
   * while the client is reconnecting ends the client for good (the
   * detector's disconnect() stops the connect loop, which then throws
   * "Connection is closed."), seen here in the chaos runs.
   */
  client(options: RedisOptions = {}): Redis {
    if (this.#stopping !== undefined) throw new Error('SentinelGroup: already stopped');
    const client = new Redis({
      sentinels: this.sentinelAddresses,
      name: this.name,
      reconnectOnError: (error) => error.message.startsWith('READONLY'),
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 50, 200),
      sentinelRetryStrategy: (times) => Math.min(times * 50, 200),
      ...options,
    });
    client.on('error', () => undefined);
    this.#clients.add(client);
    return client;
  }

  /** Runs one command on one process of the group and closes the connection. */
  async command(address: Address, command: string, ...args: (string | number)[]): Promise<unknown> {
    const client = adminClient(address);
    try {
      return await client.call(command, ...args);
    } catch (error) {
      // ioredis says only "Command timed out": name what and where.
      throw new Error(`${command} ${args.join(' ')} to ${address.host}:${address.port}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    } finally {
      client.disconnect();
    }
  }

  /** The master's address according to one sentinel. */
  async sentinelMaster(sentinel: RedisServer): Promise<Address | undefined> {
    const reply = (await this.command(sentinel, 'SENTINEL', 'get-master-addr-by-name', this.name).catch(() => null)) as string[] | null;
    if (reply === null) return undefined;
    return { host: reply[0] as string, port: Number(reply[1]) };
  }

  /**
   * The highest configuration epoch a sentinel knows of: each failover,
   * induced or not, raises it. A test that reads it before and after a step
   * learns whether the sentinels failed over on their own meanwhile.
   */
  async configEpoch(): Promise<number> {
    const epochs = await Promise.all(
      this.sentinels.map(async (sentinel) => {
        const fields = (await this.command(sentinel, 'SENTINEL', 'MASTER', this.name).catch(() => [])) as string[];
        const at = fields.indexOf('config-epoch');
        return at < 0 ? 0 : Number(fields[at + 1]);
      }),
    );
    return Math.max(...epochs);
  }

  /**
   * Writes the master acknowledges from now on reach no replica: the
   * replicas are stopped (SIGSTOP) so they cannot reconnect, and the master
   * drops their connections. (Stopping them alone is not enough: the kernel
   * still takes the stream into a stopped replica's socket buffer, and it
   * applies it when it resumes.) The next failover('lossy') kills the master
   * before they resume.
   */
  async stallReplication(): Promise<void> {
    // The harness's view of the master is from the group's last settling: after a
    // spurious failover since (the sentinels' down-after, on a busy machine)
    // it would pause the master as a replica, and the lossy failover would kill a
    // replica and lose nothing. Once the replicas are paused none can be promoted.
    await this.#followSentinels();
    const master = this.master;
    await Promise.all(this.servers.filter((server) => server !== master).map((replica) => replica.pause()));
    await this.command(master, 'CLIENT', 'KILL', 'TYPE', 'replica');
    this.#stalled = true;
  }

  /** One failover of the master; resolves once every sentinel names the new master and the group is in sync again. */
  async failover(kind: FailoverKind): Promise<FailoverRecord> {
    // Fail over the master the sentinels name now (see stallReplication), not a replica.
    if (!this.#stalled) await this.#followSentinels();
    const from = this.#masterIndex;
    const old = this.master;
    const replicas = this.servers.filter((server) => server !== old);
    const startedAt = performance.now();
    let to: number;
    switch (kind) {
      case 'kill':
        await old.kill();
        to = await this.#newMasterAfter(old);
        await old.restart({ empty: true, replicaOf: this.servers[to] });
        break;
      case 'lossy':
        if (!this.#stalled) {
          await this.stallReplication();
          await sleep(LOSSY_STALL_MS);
        }
        await old.kill();
        this.#stalled = false;
        await Promise.all(replicas.map((replica) => replica.resume()));
        to = await this.#newMasterAfter(old);
        await old.restart({ empty: true, replicaOf: this.servers[to] });
        break;
      case 'pause':
        await old.pause();
        try {
          to = await this.#newMasterAfter(old);
        } finally {
          // Back, it still believes itself master until a sentinel demotes it.
          await old.resume();
        }
        break;
      case 'planned':
        await this.#until('a sentinel to start a failover', () =>
          this.command(this.sentinels[0] as RedisServer, 'SENTINEL', 'FAILOVER', this.name).then(
            () => undefined,
            (error: unknown) => String(error),
          ),
        );
        to = await this.#newMasterAfter(old);
        break;
    }
    const record: FailoverRecord = { kind, from, to, ms: performance.now() - startedAt };
    this.#masterIndex = to;
    if (kind === 'pause' || kind === 'planned') await this.#demoteOldMaster(old);
    this.failovers.push(record);
    await this.waitUntilSettled();
    return record;
  }

  /**
   * Until every sentinel names one master, that server says it is master,
   * every other server replicates from it with its link up, and every
   * sentinel knows the others and the replicas (a failover needs them).
   */
  async waitUntilSettled(): Promise<void> {
    await this.#until('the group to settle', () => this.#unsettled());
  }

  /**
   * Whether the group is settled now (as waitUntilSettled waits for); when it
   * is, `master` is the master it settled on, which after a failover the
   * sentinels made on their own is not the one the harness saw last.
   */
  async isSettled(): Promise<boolean> {
    return (await this.#unsettled()) === undefined;
  }

  /** What keeps the group from being settled, or undefined when it is. */
  async #unsettled(): Promise<string | undefined> {
    const named = await Promise.all(this.sentinels.map((sentinel) => this.sentinelMaster(sentinel)));
    const port = named[0]?.port;
    if (port === undefined || named.some((address) => address?.port !== port)) return `sentinels name ${named.map((a) => a?.port).join(', ')}`;
    const index = this.servers.findIndex((server) => server.port === port);
    if (index < 0) return `sentinels name an unknown master ${port}`;
    const roles = await Promise.all(this.servers.map((server) => this.#replication(server)));
    const replicas = this.servers.length - 1;
    if (roles[index]?.role !== 'master' || (roles[index]?.connectedReplicas ?? 0) < replicas || roles.some((info, i) => i !== index && (info?.role !== 'slave' || !info.linkUp))) {
      return `servers report ${JSON.stringify(roles)}`;
    }
    for (const sentinel of this.sentinels) {
      const known = (await this.command(sentinel, 'SENTINEL', 'replicas', this.name).catch(() => [])) as string[][];
      const peers = (await this.command(sentinel, 'SENTINEL', 'sentinels', this.name).catch(() => [])) as unknown[];
      // A sentinel promotes only a replica it can reach. (Its view of the
      // replica's own link is refreshed every 10 s only: a planned failover
      // retries until the sentinel has seen the link up.)
      const views = known.map((fields) => `${fields[fields.indexOf('name') + 1]} [${fields[fields.indexOf('flags') + 1]}]`);
      const promotable = views.filter((view) => view.endsWith('[slave]'));
      if (promotable.length < replicas || peers.length < SENTINELS - 1) return `sentinel ${sentinel.port} sees ${peers.length} peers, replicas ${views.join('; ')}`;
    }
    this.#masterIndex = index;
    return undefined;
  }

  /**
   * Takes the master every sentinel names, if that server says it is master,
   * as the one to fail over; otherwise keeps the last settled view. Unlike
   * waitUntilSettled() it asks nothing of the replicas: a test may have cut
   * their links on purpose.
   */
  async #followSentinels(): Promise<void> {
    const named = await Promise.all(this.sentinels.map((sentinel) => this.sentinelMaster(sentinel)));
    const port = named[0]?.port;
    if (port === undefined || named.some((address) => address?.port !== port)) return;
    const index = this.servers.findIndex((server) => server.port === port);
    if (index < 0 || (await this.#replication(this.servers[index] as RedisServer))?.role !== 'master') return;
    this.#masterIndex = index;
  }

  /** Until every replica has every write the master made so far. */
  async waitForReplication(): Promise<void> {
    await this.command(this.master, 'WAIT', this.servers.length - 1, this.#options.failoverDeadlineMs);
  }

  /** Disconnects every client, closes the proxies and stops every process. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const client of this.#clients) client.disconnect();
      this.#clients.clear();
      await settleAll(
        [
          ...this.#links.flatMap((link) => (link ? [link.close()] : [])),
          ...this.sentinels.map((sentinel) => sentinel.stop()),
          ...this.servers.map((server) => server.stop()),
        ],
        'SentinelGroup.stop',
      );
    })();
    return this.#stopping;
  }

  /**
   * A sentinel demotes a master it had failed over from only at its next
   * look at it, up to 10 s later; the harness sends the same REPLICAOF at
   * once, so that the next failover finds a replica in sync. Only to `old`,
   * and only while every sentinel still names the master it is pointed at:
   * pointed at a server the sentinels had meanwhile demoted (a spurious
   * failover on a busy machine), a master would replace its data with a
   * stale copy, losing the locks it granted.
   */
  async #demoteOldMaster(old: RedisServer): Promise<void> {
    const named = await Promise.all(this.sentinels.map((sentinel) => this.sentinelMaster(sentinel)));
    const master = this.master;
    if (named.some((address) => address?.port !== master.port)) return;
    if ((await this.#replication(old))?.role !== 'master') return;
    await this.command(old, 'REPLICAOF', master.host, master.port).catch(() => undefined);
  }

  async #newMasterAfter(old: RedisServer): Promise<number> {
    let index = -1;
    // In a full-suite run on 2 busy cores the sentinels once still named the killed master
    // after 20 s: an election that fails (split votes, late replies) is retried only after
    // twice failover-timeout (60 s with proxied replication). Halfway to the deadline, if no
    // sentinel has a failover under way, the harness forces the failover it is inducing (no
    // vote needed); what tests check is after it.
    const nudgeAt = performance.now() + this.#options.failoverDeadlineMs / 2;
    let nudged = false;
    await this.#until(`a replica of ${old.host}:${old.port} to be promoted`, async () => {
      const named = await Promise.all(this.sentinels.map((sentinel) => this.sentinelMaster(sentinel)));
      const port = named[0]?.port;
      if (!nudged && performance.now() > nudgeAt && named.every((address) => address?.port === old.port) && !(await this.#failoverUnderWay())) {
        nudged = true;
        await this.command(this.sentinels[0] as RedisServer, 'SENTINEL', 'FAILOVER', this.name).catch(() => undefined);
      }
      if (port === undefined || port === old.port || named.some((address) => address?.port !== port)) return `sentinels name ${named.map((a) => a?.port).join(', ')}`;
      index = this.servers.findIndex((server) => server.port === port);
      const role = index < 0 ? undefined : (await this.#replication(this.servers[index] as RedisServer))?.role;
      return role === 'master' ? undefined : `${port} reports role ${role}`;
    });
    return index;
  }

  /** Whether a sentinel is in the middle of a failover of the master (its flags say failover_in_progress). */
  async #failoverUnderWay(): Promise<boolean> {
    const flags = await Promise.all(
      this.sentinels.map(async (sentinel) => {
        const fields = (await this.command(sentinel, 'SENTINEL', 'MASTER', this.name).catch(() => [])) as string[];
        return fields[fields.indexOf('flags') + 1] ?? '';
      }),
    );
    return flags.some((flag) => flag.includes('failover_in_progress'));
  }

  async #replication(server: RedisServer): Promise<{ role: string; linkUp: boolean; connectedReplicas: number } | undefined> {
    if (!server.isRunning || server.isPaused) return undefined;
    const info = (await this.command(server, 'INFO', 'replication').catch(() => '')) as string;
    const field = (name: string): string | undefined => new RegExp(`^${name}:(.*)\\r?$`, 'm').exec(info)?.[1];
    const role = field('role');
    if (role === undefined) return undefined;
    return { role, linkUp: field('master_link_status') === 'up', connectedReplicas: Number(field('connected_slaves') ?? 0) };
  }

  /** Polls `blocker` until it finds nothing in the way; the error says what still was. */
  async #until(what: string, blocker: () => Promise<string | undefined>): Promise<void> {
    const deadline = performance.now() + this.#options.failoverDeadlineMs;
    for (let blocked = await blocker(); blocked !== undefined; blocked = await blocker()) {
      if (performance.now() > deadline) throw new Error(`SentinelGroup: gave up waiting for ${what}: ${blocked}`);
      await sleep(POLL_MS);
    }
  }
}
