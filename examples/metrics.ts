// Turns quorumlock's diagnostics_channel events into metrics, with no
// dependency: counters and latency samples printed every few seconds.
// Wire the same handlers to prom-client, OpenTelemetry or StatsD in a real app.
//
//   node --import tsx --import ./scripts/register-lua.mjs examples/metrics.ts [redis-url...]
import { subscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { type AcquireEvent, type LostEvent, type ReleaseEvent, Redlock } from '../src/index.js';

const counters = new Map<string, number>();
const acquireMs: number[] = [];
const count = (name: string) => counters.set(name, (counters.get(name) ?? 0) + 1);

subscribe('quorumlock:acquire', (message) => {
  const event = message as AcquireEvent;
  count(event.granted ? 'acquire.granted' : `acquire.failed.${event.errorCode ?? 'other'}`);
  if (event.granted) acquireMs.push(event.durationMs);
  for (const node of event.nodes) if (node.status !== 'ok') count(`node.${node.node}.${node.status}`);
});
subscribe('quorumlock:release', (message) => count(`release.nodes.${(message as ReleaseEvent).released}`));
subscribe('quorumlock:lost', (message) => count(`lost.${(message as LostEvent).errorCode}`));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const urls = process.argv.slice(2);
const clients = (urls.length > 0 ? urls : ['redis://127.0.0.1:6379']).map((url) => new Redis(url));
const redlock = new Redlock(clients);

const workers = Array.from({ length: 8 }, async () => {
  for (let i = 0; i < 200; i++) {
    await redlock.using('metrics:demo', 1_000, async () => new Promise((resolve) => setTimeout(resolve, 1)));
  }
});
await Promise.all(workers);
console.log(Object.fromEntries(counters));
console.log(`acquire p50 ${percentile(acquireMs, 50).toFixed(2)} ms, p99 ${percentile(acquireMs, 99).toFixed(2)} ms`);
await Promise.all(clients.map((client) => client.quit()));
