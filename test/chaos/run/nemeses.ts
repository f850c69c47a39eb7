/**
 * Fault injectors. Each runs until the scenario's signal aborts, records
 * every fault it injects in the FaultLog, and leaves everything healed when
 * it returns. Only faults within Redlock's stated assumptions live here (the
 * negative controls break them on purpose, in negative-controls.test.ts):
 * a node restarted without its data stays down longer than the largest TTL;
 * an immediate restart replays an AOF fsynced on every write; a fast clock
 * stays within the drift factor; the network may do anything.
 */
import type { FaultLog } from '../history/FaultLog.js';
import { SkewNemesis } from '../../support/skewNemesis.js';
import type { TcpProxy } from '../../support/TcpProxy.js';
import type { ChaosCluster } from './cluster.js';
import type { Rng } from './rng.js';
import { sleep, untilAborted } from './sleep.js';

export interface NemesisContext {
  readonly cluster: ChaosCluster;
  readonly faults: FaultLog;
  readonly rng: Rng;
  readonly signal: AbortSignal;
  /** The largest TTL any locker asks for (extends included). */
  readonly maxTtlMs: number;
  /** Key pattern of the scenario's resources (for the skew nemesis). */
  readonly keyPattern: string;
}

export interface Nemesis {
  /** Short description for the summary. */
  readonly name: string;
  run(ctx: NemesisContext): Promise<void>;
}

/** Nodes that are running and not paused. */
function upNodes(ctx: NemesisContext): number[] {
  return ctx.cluster.set.nodes.flatMap((node, i) => (node.isRunning && !node.isPaused ? [i] : []));
}

/** How long a node restarted without its data must stay down: longer than any key it held could live. */
function safeDowntimeMs(ctx: NemesisContext): number {
  return ctx.maxTtlMs + ctx.rng.int(100, 400);
}

/**
 * kill -9 up to `maxDown` nodes (a majority when maxDown >= 3, so some rounds
 * find no quorum), keep them down longer than the largest TTL, restart them
 * empty (no persistence).
 */
export function crashAndDelayedRestart(maxDown: number): Nemesis {
  return {
    name: `kill -9 ≤${maxDown} nodes, restart empty after > max TTL`,
    async run(ctx) {
      while (!ctx.signal.aborted) {
        await sleep(ctx.rng.int(50, 400), ctx.signal);
        if (ctx.signal.aborted) break;
        const victims = ctx.rng.sample(upNodes(ctx), ctx.rng.int(1, maxDown));
        await Promise.all(victims.map((i) => killThenRestartEmpty(ctx, i, 'kill -9', () => ctx.cluster.set.node(i).kill())));
      }
    },
  };
}

/**
 * kill -9 a node while acquire requests are in flight: its links first drop
 * every reply (the requests reach Redis and are applied) or delay them, then
 * the node dies, so the lockers never learn what happened there. Up to
 * `maxNodes` at once: with a majority, whole acquire rounds fail with their
 * keys written, and rule 5 (release on all N) must clean them up.
 */
export function crashMidAcquire(maxNodes: number): Nemesis {
  return {
    name: `reply loss then kill -9 ≤${maxNodes} nodes mid-acquire, restart empty after > max TTL`,
    async run(ctx) {
      while (!ctx.signal.aborted) {
        await sleep(ctx.rng.int(50, 300), ctx.signal);
        if (ctx.signal.aborted) break;
        const victims = ctx.rng.sample(upNodes(ctx), ctx.rng.int(1, maxNodes));
        await Promise.all(
          victims.map(async (i) => {
            const proxies = ctx.cluster.proxiesTo(i);
            const dropReplies = ctx.rng.chance(0.5);
            const how = dropReplies ? 'proxy:dropReplies' : 'proxy:latency 40ms';
            const endLinkFault = ctx.faults.begin(how, ctx.cluster.nodeName(i), 'then kill -9');
            for (const proxy of proxies) {
              if (dropReplies) proxy.dropReplies();
              else proxy.latencyMs = 40;
            }
            // Long enough for requests to be applied while their replies are held back.
            await sleep(ctx.rng.int(10, 60));
            await killThenRestartEmpty(ctx, i, 'kill -9 (mid-acquire)', async () => {
              await ctx.cluster.set.node(i).kill();
              for (const proxy of proxies) proxy.heal();
              endLinkFault();
            });
          }),
        );
      }
    },
  };
}

async function killThenRestartEmpty(ctx: NemesisContext, index: number, kind: string, kill: () => Promise<void>): Promise<void> {
  const downtime = safeDowntimeMs(ctx);
  const end = ctx.faults.begin(kind, ctx.cluster.nodeName(index), `down ${downtime} ms, restarted empty`);
  try {
    await kill();
    // Not cut short by the end of the run: an early restart would break the assumption.
    await sleep(downtime);
    await ctx.cluster.set.node(index).restart({ empty: true });
  } finally {
    end();
  }
}

/** SIGSTOP up to `maxPaused` nodes for longer than the largest TTL, then SIGCONT. */
export function pauseBeyondTtl(maxPaused: number): Nemesis {
  return {
    name: `SIGSTOP ≤${maxPaused} nodes for > max TTL`,
    async run(ctx) {
      while (!ctx.signal.aborted) {
        await sleep(ctx.rng.int(50, 400), ctx.signal);
        if (ctx.signal.aborted) break;
        const victims = ctx.rng.sample(upNodes(ctx), ctx.rng.int(1, maxPaused));
        const pauseMs = Math.floor(ctx.maxTtlMs * 1.5);
        await Promise.all(
          victims.map((i) =>
            ctx.faults.during(
              'SIGSTOP',
              ctx.cluster.nodeName(i),
              async () => {
                const node = ctx.cluster.set.node(i);
                await node.pause();
                try {
                  await sleep(pauseMs);
                } finally {
                  await node.resume();
                }
              },
              `${pauseMs} ms`,
            ),
          ),
        );
      }
    },
  };
}

/**
 * kill -9 up to `maxDown` nodes (a majority too) and restart them at once:
 * safe only because every write was fsynced to the AOF before its reply
 * (the cluster must run with persistence 'appendfsync-always').
 */
export function crashAndAofRestart(maxDown: number): Nemesis {
  return {
    name: `kill -9 ≤${maxDown} nodes, restart at once from an appendfsync-always AOF`,
    async run(ctx) {
      const persistence = ctx.cluster.set.node(0).persistence;
      if (persistence !== 'appendfsync-always') throw new Error(`crashAndAofRestart needs appendfsync-always, the nodes have ${persistence}`);
      while (!ctx.signal.aborted) {
        await sleep(ctx.rng.int(50, 300), ctx.signal);
        if (ctx.signal.aborted) break;
        const victims = ctx.rng.sample(upNodes(ctx), ctx.rng.int(1, maxDown));
        await Promise.all(
          victims.map((i) =>
            ctx.faults.during('kill -9 + AOF restart', ctx.cluster.nodeName(i), () => ctx.cluster.set.node(i).restart()),
          ),
        );
      }
    },
  };
}

type LinkFault = 'latency' | 'slow' | 'blackhole' | 'dropReplies' | 'resetAfterRequest' | 'cutOff';

/**
 * Network faults on individual links (one locker to one node) or on every
 * link of a node: latency under and over the node timeout, blackholes,
 * replies dropped after the request was applied, a reset right after a
 * request, cut-offs. Any number of links at once: the network is never an
 * assumption of Redlock's safety.
 */
export function networkFaults(nodeTimeoutMs: number): Nemesis {
  return {
    name: 'per-link latency / blackhole / dropReplies / reset-after-request / cut-off',
    async run(ctx) {
      const active = new Set<TcpProxy>();
      try {
        while (!ctx.signal.aborted) {
          await sleep(ctx.rng.int(20, 200), ctx.signal);
          if (ctx.signal.aborted) break;
          const node = ctx.rng.int(0, ctx.cluster.size - 1);
          const all = ctx.cluster.proxiesTo(node);
          // Mostly one locker's link (asymmetric partitions), sometimes the whole node.
          const wholeNode = ctx.rng.chance(0.3);
          const targets = wholeNode ? all : ctx.rng.sample(all, 1);
          const kind = ctx.rng.weighted<LinkFault>({ latency: 4, slow: 2, blackhole: 2, dropReplies: 2, resetAfterRequest: 1, cutOff: 1 });
          const latency = kind === 'slow' ? ctx.rng.int(nodeTimeoutMs, nodeTimeoutMs * 2) : ctx.rng.int(5, Math.floor(nodeTimeoutMs / 3));
          const holdMs = ctx.rng.int(50, ctx.maxTtlMs);
          const label = kind === 'latency' || kind === 'slow' ? `proxy:latency ${latency}ms` : `proxy:${kind}`;
          const target = `${ctx.cluster.nodeName(node)}${wholeNode ? ' (all links)' : ' (one link)'}`;
          const fresh = targets.filter((p) => !active.has(p));
          if (fresh.length === 0) continue;
          for (const proxy of fresh) {
            active.add(proxy);
            applyLinkFault(proxy, kind, latency);
          }
          const end = ctx.faults.begin(label, target, `${holdMs} ms`);
          // Faults overlap in time: heal this one later without waiting for it.
          void sleep(holdMs).then(() => {
            for (const proxy of fresh) {
              proxy.heal();
              active.delete(proxy);
            }
            end();
          });
        }
      } finally {
        // Let the pending heals run, then make sure every link is healed.
        await sleep(ctx.maxTtlMs + 10);
        for (const proxy of active) proxy.heal();
      }
    },
  };
}

function applyLinkFault(proxy: TcpProxy, kind: LinkFault, latencyMs: number): void {
  switch (kind) {
    case 'latency':
    case 'slow':
      proxy.latencyMs = latencyMs;
      return;
    case 'blackhole':
      proxy.blackhole();
      return;
    case 'dropReplies':
      proxy.dropReplies();
      return;
    case 'resetAfterRequest':
      proxy.resetAfterRequest();
      return;
    case 'cutOff':
      proxy.cutOff();
      return;
  }
}

/**
 * Node clocks that run at `rates[i]` (1.05 = 5% fast, < 1 slow), emulated by
 * the skew nemesis of test/support. Safe while every fast rate r satisfies
 * ttl / r >= ttl - drift(ttl), i.e. r <= 1 / (1 - driftFactor) roughly: the
 * scenario picks the drift factor to cover it.
 */
export function clockSkew(rates: readonly number[]): Nemesis {
  return {
    name: `node clocks at ${rates.map((r) => `x${r}`).join(' ')}`,
    async run(ctx) {
      const nemeses = rates.map((rate, i) => new SkewNemesis(ctx.cluster.admin(i), { rate, match: ctx.keyPattern, intervalMs: 5 }));
      const ends = rates.map((rate, i) => ctx.faults.begin(`clock x${rate}`, ctx.cluster.nodeName(i)));
      for (const nemesis of nemeses) nemesis.start();
      await untilAborted(ctx.signal);
      await Promise.all(nemeses.map((n) => n.stop()));
      for (const end of ends) end();
    },
  };
}
