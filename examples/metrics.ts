// Turns quorumlock's diagnostics_channel events into metrics, with no
// dependency: counters and latency percentiles, printed once 8 workers have
// run 200 lock cycles each. Wire the same handlers to prom-client,
// OpenTelemetry or StatsD in a real app.
//
// It needs Redis: pass one URL per node (default redis://127.0.0.1:6379), e.g.
// `redis-server --port 6379 --save ''` in another terminal.
//
// In a project that depends on quorumlock and ioredis (Node 20 runs
// TypeScript through tsx):
//
//   npx tsx metrics.ts [redis-url...]
//
// In this repository, where 'quorumlock' resolves to the package itself
// through the "exports" of its package.json, that is to dist/:
//
//   npm run build && node --import tsx examples/metrics.ts [redis-url...]
import { subscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { type AcquireEvent, type LostEvent, type ReleaseEvent, type ReleaseSettledEvent, Redlock } from 'quorumlock';

const counters = new Map<string, number>();
const acquireMs: number[] = [];
const count = (name: string) => counters.set(name, (counters.get(name) ?? 0) + 1);

subscribe('quorumlock:acquire', (message) => {
  const event = message as AcquireEvent;
  count(event.granted ? 'acquire.granted' : `acquire.failed.${event.errorCode ?? 'other'}`);
  if (event.granted) acquireMs.push(event.durationMs);
  for (const node of event.nodes) if (node.status !== 'ok') count(`node.${node.node}.${node.status}`);
});
// Published before release() resolves, so these counts are complete as soon as the last release returns.
subscribe('quorumlock:release', (message) => {
  count('release');
  if ((message as ReleaseEvent).released === 0) count('release.nothing-deleted');
});
// Every node's answer comes later, once the slowest node has replied or timed out.
subscribe('quorumlock:release-settled', (message) => {
  for (const node of (message as ReleaseSettledEvent).nodes) if (node.status !== 'ok') count(`node.${node.node}.release.${node.status}`);
});
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
