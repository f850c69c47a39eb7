// Hot key across processes: N child processes x W waiters x R rounds on one
// key, 1 ms hold. Prints critical sections per second and Redis commands per
// critical section (INFO commandstats, all nodes). Usage:
//   node --import tsx scripts/measure/hotKey.ts <nodes> [procs] [waiters] [rounds]
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { startNodes } from '../../test/support/harness.js';

const [nodesArg = '1', procsArg = '8', waitersArg = '8', roundsArg = '8'] = process.argv.slice(2);
const set = await startNodes(Number(nodesArg));
const ports = set.endpoints.map((e) => e.port).join(',');
const clients = set.endpoints.map((e) => new Redis({ port: e.port, host: '127.0.0.1' }));
// INFO commandstats counts the commands scripts run too: requests are the
// scripts (EVALSHA, EVAL) plus SETs sent by clients (all SETs minus those the
// scripts ran are not told apart, so requests counts every SET: an upper bound).
const commands = async () => {
  let total = 0;
  let requests = 0;
  for (const client of clients) {
    const stats = await client.info('commandstats');
    for (const m of stats.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
      if (/^(info|config|ping|client|hello|flushall|select|subscribe|unsubscribe)/.test(m[1]!)) continue;
      total += Number(m[2]);
      if (/^(evalsha|eval|set)$/.test(m[1]!)) requests += Number(m[2]);
    }
  }
  return { total, requests };
};
// Children started and connected before the clock starts: spawn them, let each wait for "go" on stdin.
const readies: Promise<void>[] = [];
const spawned = Array.from({ length: Number(procsArg) }, () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'scripts/measure/hotKeyChild.ts', ports, waitersArg, roundsArg], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let ready: () => void = () => undefined;
  readies.push(new Promise<void>((resolve) => (ready = resolve)));
  child.stdout.on('data', (d) => {
    out += d;
    if (out.includes('ready')) ready();
  });
  const finished = new Promise<number>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(Number(/done (\d+)/.exec(out)?.[1])) : reject(new Error(`child exit ${code}`)))),
  );
  return { child, finished };
});
// The clock starts once every child is up and connected: tsx start-up is not counted.
await Promise.all(readies);
await Promise.all(clients.map((c) => c.config('RESETSTAT')));
const started = performance.now();
for (const { child } of spawned) child.stdin.write('go\n');
const counts = await Promise.all(spawned.map((s) => s.finished));
const elapsed = (performance.now() - started) / 1000;
const cs = counts.reduce((a, b) => a + b, 0);
const { total: cmds, requests } = await commands();
const info = await clients[0]!.info('commandstats');
console.log(JSON.stringify({ nodes: Number(nodesArg), cs, seconds: +elapsed.toFixed(2), csPerSec: +(cs / elapsed).toFixed(0), cmdsPerCs: +(cmds / cs).toFixed(1), scriptsAndSetsPerCs: +(requests / cs).toFixed(1) }));
console.log(info.split('\n').filter((l) => l.startsWith('cmdstat')).join('\n'));
for (const c of clients) c.disconnect();
await set.stopAll();
