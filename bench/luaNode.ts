/**
 * `npm run bench:lua-node`: script evals per second of quorumlock/testing's
 * in-memory node, beside ioredis-mock's, in the same run on the same scripts
 * (the project's .lua files, composed as the library sends them): a lock's
 * cycle of acquire (two keys, so the script runs), extend and release, each
 * by EVALSHA, one after the other on one connection. Each side runs for the
 * same time (its own, the reference's runs between its cycles not counted); the line says how many evals each made, and how many of
 * its replies differed from the in-memory node's (which the model check holds
 * to a real redis-server).
 *
 * Runs on the build in dist/ (the npm script builds it first): tsx does not
 * load the .lua sources that src/ imports.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import RedisMock from 'ioredis-mock';
import { InMemoryNode } from '../dist/testing.js';

const SECONDS = Number(process.argv[2] ?? 3);
const lua = (name: string) => readFileSync(new URL(`../src/scripts/${name}.lua`, import.meta.url), 'utf8');
const lineScript = (name: string) => [lua('line'), 'line_helpers()', lua(name)].join('\n');
const SCRIPTS = { acquire: lineScript('acquire'), extend: lua('extend'), release: lineScript('release') };
const sha = (source: string) => createHash('sha1').update(source).digest('hex');

interface Evaluator {
  eval(source: string, keyCount: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, keyCount: number, ...args: (string | number)[]): Promise<unknown>;
}

/** One lock's cycle: what each script answered, in order. */
async function cycle(on: Evaluator, i: number): Promise<unknown[]> {
  const keys = [`a:${i}`, `b:${i}`];
  const value = `v${i}`;
  const withLines = [...keys, `{a:${i}}:line`, `{a:${i}}:lease`, `{a:${i}}:ticket`, `{b:${i}}:line`, `{b:${i}}:lease`, `{b:${i}}:ticket`];
  return [
    await on.evalsha(sha(SCRIPTS.acquire), 2, ...keys, value, 10_000),
    await on.evalsha(sha(SCRIPTS.extend), 2, ...keys, value, 20_000),
    await on.evalsha(sha(SCRIPTS.release), withLines.length, ...withLines, value),
  ];
}

async function measure(
  name: string,
  on: Evaluator,
  load: (source: string) => Promise<unknown>,
  reference: (i: number) => Promise<unknown[]>,
): Promise<{ name: string; evalsPerSecond: number; evals: number; differing: number }> {
  for (const source of Object.values(SCRIPTS)) await load(source);
  let evals = 0;
  let differing = 0;
  // Only the measured side's own time counts: the reference runs in between, off the clock.
  let spentMs = 0;
  for (let i = 0; spentMs < SECONDS * 1000; i++) {
    const started = performance.now();
    const replies = await cycle(on, i).catch((error: unknown) => [String(error)]);
    spentMs += performance.now() - started;
    evals += 3;
    if (JSON.stringify(replies) !== JSON.stringify(await reference(i))) differing++;
  }
  return { name, evalsPerSecond: Math.round((evals / spentMs) * 1000), evals, differing };
}

await InMemoryNode.ready();
const expected = new InMemoryNode('reference');
for (const source of Object.values(SCRIPTS)) expected.loadScript(source);
const reference = (i: number) => cycle(expected, i);

const node = new InMemoryNode('bench');
const mock = new RedisMock();
const results = [
  await measure('quorumlock/testing InMemoryNode', node, (source) => Promise.resolve(node.loadScript(source)), reference),
  await measure('ioredis-mock', mock as unknown as Evaluator, (source) => mock.eval(source, 0).catch(() => undefined), reference),
];
for (const r of results) {
  process.stdout.write(`${r.name.padEnd(34)} ${String(r.evalsPerSecond).padStart(7)} evals/s  (${r.evals} evals in ${SECONDS} s; ${r.differing} cycles answered otherwise than the Lua node)\n`);
}
