// Which requests a hot key costs: MONITOR during a small cross-process run.
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { startNodes } from '../../test/support/harness.js';
import { acquireScript, keepaliveScript, leaveScript, releaseScript } from '../../src/scripts/index.js';

const set = await startNodes(1);
const port = String(set.endpoints[0]!.port);
const client = new Redis({ port: Number(port), host: '127.0.0.1' });
const monitor = await client.duplicate().monitor();
const counts = new Map<string, number>();
const names = new Map([[acquireScript.sha, 'acquire'], [releaseScript.sha, 'release'], [keepaliveScript.sha, 'keepalive'], [leaveScript.sha, 'leave']]);
let depth = 0;
monitor.on('monitor', (_time: string, args: string[], source: string) => {
  if (source.startsWith('lua')) return;
  void depth;
  const [command = '', sha = ''] = args;
  let name = command.toLowerCase();
  if (name === 'evalsha') name = `${names.get(sha) ?? sha}${names.get(sha) === 'acquire' ? (args.includes('line') ? ':line' : ':plain') : ''}`;
  counts.set(name, (counts.get(name) ?? 0) + 1);
});
const procs = Number(process.argv[2] ?? 4);
const kids = Array.from({ length: procs }, () => new Promise<void>((resolve) => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-lua.mjs', 'scripts/measure/hotKeyChild.ts', port, '8', '8'], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.on('data', (d) => { if (String(d).includes('ready')) child.stdin.write('go\n'); });
  child.on('exit', () => resolve());
}));
await Promise.all(kids);
await new Promise((r) => setTimeout(r, 200));
const cs = procs * 64;
console.log(JSON.stringify(Object.fromEntries([...counts].map(([k, v]) => [k, +(v / cs).toFixed(2)]))));
monitor.disconnect(); client.disconnect(); await set.stopAll();
