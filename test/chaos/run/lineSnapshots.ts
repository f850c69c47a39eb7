/**
 * Samples what every node has for one resource (its key, its wait line and
 * the leases), atomically per node, every few milliseconds, and keeps a
 * snapshot whenever it changed. It explains a finding of the wait-line
 * scenario (who the line's head was on each node, who had a reservation);
 * nothing is judged on it. Direct connections, not the lockers' proxies.
 */
import { Redis } from 'ioredis';
import { lineKeysFor } from '../../../src/scripts/lineKeys.js';
import { defaultClientOptions } from '../../support/harness.js';
import { sharedNow } from '../history/timeBase.js';
import type { NodeSnapshot } from '../history/types.js';
import type { ChaosCluster } from './cluster.js';
import { sleep } from './sleep.js';

// Read-only, so TIME needs no effects replication; one script, so one instant per node.
const SNAPSHOT = `
local t = redis.call('TIME')
return { t[1], t[2], redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1]),
  redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'), redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES') }
`;

type Reply = [string, string, string, number, string[], string[]];

export class LineSnapshots {
  readonly snapshots: NodeSnapshot[] = [];
  readonly #clients: Redis[];
  readonly #last = new Map<string, string>();
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly resource: string,
    private readonly everyMs = 15,
  ) {
    // A killed or paused node must not hold the sampler up: no queue, a short timeout.
    this.#clients = cluster.set.nodes.map((node) => {
      const client = new Redis({ ...defaultClientOptions, host: node.host, port: node.port, enableOfflineQueue: false, commandTimeout: 50 });
      client.on('error', () => undefined);
      return client;
    });
  }

  start(): void {
    this.#running = this.#loop();
  }

  /** Idempotent. */
  async stop(): Promise<NodeSnapshot[]> {
    this.#stopped = true;
    await this.#running;
    for (const client of this.#clients) client.disconnect();
    return this.snapshots;
  }

  async #loop(): Promise<void> {
    const [line, lease] = lineKeysFor(this.resource);
    while (!this.#stopped) {
      await Promise.all(
        this.#clients.map(async (client, i) => {
          const reply = (await client.eval(SNAPSHOT, 3, this.resource, line, lease).catch(() => undefined)) as Reply | undefined;
          if (reply === undefined) return;
          this.#keep(this.cluster.nodeName(i), reply);
        }),
      );
      await sleep(this.everyMs);
    }
  }

  #keep(node: string, [seconds, micros, value, pttlMs, line, leases]: Reply): void {
    const serverMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const places = pairs(line);
    const leaseLeftMs = pairs(leases).map(([v, until]) => [v, Number(until) - serverMs] as const);
    // Leases move with every keepalive: a change of who holds or who waits is what counts.
    const key = JSON.stringify([value, places, leaseLeftMs.map(([v, left]) => [v, left > 0])]);
    if (this.#last.get(node) === key) return;
    this.#last.set(node, key);
    this.snapshots.push({ node, at: sharedNow(), value: value === '' ? null : value, pttlMs, line: places, leaseLeftMs });
  }
}

function pairs(flat: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
  return out;
}
