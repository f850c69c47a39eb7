/**
 * Every example the docs show a user (```ts / ```js blocks of README.md and
 * docs/, and the programs of examples/) type-checks as a strict user project
 * and, unless it is marked ```ts fragment, runs: a fresh Node process per
 * block, against real redis-server processes standing in for the
 * localhost:6379..6383 the block connects to (`new Redis()`, `new Redis(6380)`,
 * `createClient({ url: 'redis://localhost:6381' })`; the servers are empty when
 * the block starts). A runnable block quits its clients so that its process
 * exits by itself, and checks its own result (node:assert). Valkey GLIDE
 * connects from native code, out of the port mapping's reach: its blocks are
 * fragments. The reader's own names (a `db`, a `chargeCustomer`) are declared,
 * and stubbed for the run, in userNames.ts.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';
import { type Block, blockName, collectBlocks } from './support/blocks.js';
import { EXAMPLE_PORTS } from './support/portMap.js';
import { blockDir, failed, runBlock, type RunOutcome } from './support/runBlock.js';
import { type Checked, checkBlocks } from './support/typecheck.js';

/** A block must let its process end by itself (quit its clients) well within this. */
const RUN_LIMIT_MS = 30_000;
/** Two at a time on 2 cores, each with its own five servers, flushed before every block. */
const LANES = 2;

const blocks = collectBlocks();
const runnable = blocks.filter((block) => !block.fragment);

// The canaries ride with the docs' blocks: they show that each check has teeth.
const canary = (code: string, language: Block['language'] = 'ts'): Block => ({ source: 'canary.md', line: 2, language, fragment: false, code });
const canaries = {
  unknownCatch: canary("try {\n  JSON.parse('x');\n} catch (error) {\n  console.log(error.message);\n}"),
  undeclared: canary('await chargeCustomer({ signal: AbortSignal.timeout(1) });\nawait somethingNobodyDeclared();'),
  notExported: canary("import { RedisLock } from 'quorumlock';\nexport const x: RedisLock | undefined = undefined;\nexport const y: typeof import('quorumlock').NotExported = 1;"),
  jsChecked: canary("const n = 1;\nn.toUpperCase();", 'js'),
  // Five distinct servers behind the five ports, empty when the block starts, and the library from src/.
  ports: canary(
    [
      "import assert from 'node:assert/strict';",
      "import { Redis } from 'ioredis';",
      "import { RedisLock } from 'quorumlock';",
      'const clients = [6379, 6380, 6381, 6382, 6383].map((port) => new Redis(port));',
      "assert.deepEqual(await Promise.all(clients.map((c) => c.dbsize())), [0, 0, 0, 0, 0]);",
      "await Promise.all(clients.map((c, i) => c.set('canary', String(i))));",
      "assert.deepEqual(await Promise.all(clients.map((c) => c.get('canary'))), ['0', '1', '2', '3', '4']);",
      'const client = new Redis();',
      "await new RedisLock(client).using('canary:lock', 1000, async () => undefined);",
      'await Promise.all([client, ...clients].map((c) => c.quit()));',
    ].join('\n'),
  ),
  throws: canary("import assert from 'node:assert/strict';\nassert.equal(1 + 1, 3);"),
  hangs: canary('setInterval(() => undefined, 1000);'),
};
const TIGHT_LIMIT_MS = 5_000;
/**
 * A block that fails is run once more before it counts as failed. The blocks
 * use the library's default 50 ms node timeout, as a user's program would: on
 * a machine busy enough to answer later than that (both cores taken), a
 * block's `inspect` can read `unknown` for `held`. A block that fails twice fails; one that passed only the second time is named in the
 * run's output.
 */
const RUNS_PER_BLOCK = 2;

let checked: Map<Block, Checked>;
const outcomes = new Map<Block, RunOutcome>();
/** A block's first run, where it failed and was run again. */
const failedFirst = new Map<Block, RunOutcome>();
const lanes: LocalNodeSet[] = [];
let dir = '';

beforeAll(async () => {
  checked = checkBlocks([...blocks, ...Object.values(canaries)]);
}, 180_000);

beforeAll(async () => {
  dir = await blockDir();
  lanes.push(...(await Promise.all(Array.from({ length: LANES }, () => startNodes(EXAMPLE_PORTS.length)))));
  const queue: [Block, number][] = [
    ...runnable.map((block): [Block, number] => [block, RUN_LIMIT_MS]),
    [canaries.ports, RUN_LIMIT_MS],
    [canaries.throws, RUN_LIMIT_MS],
    [canaries.hangs, TIGHT_LIMIT_MS],
  ];
  let next = 0;
  await Promise.all(
    lanes.map(async (nodes) => {
      for (let index = next++; index < queue.length; index = next++) {
        const [block, timeoutMs] = queue[index] ?? [];
        if (block === undefined || timeoutMs === undefined) continue;
        const userNames = checked.get(block)?.declared ?? [];
        const ports = nodes.endpoints.map((endpoint) => endpoint.port);
        // The canary that hangs is known to: once is enough.
        const runs = block === canaries.hangs ? 1 : RUNS_PER_BLOCK;
        for (let run = 1; run <= runs; run++) {
          await nodes.flushAll();
          const outcome = await runBlock(block, index, { dir, ports, userNames, timeoutMs });
          outcomes.set(block, outcome);
          if (!failed(outcome)) break;
          if (run < runs) failedFirst.set(block, outcome);
        }
      }
    }),
  );
  console.log(`docs examples: ${blocks.length} blocks type-checked, ${runnable.length} of them run, ${blocks.length - runnable.length} type-checked only (fragments)`);
  for (const [block, first] of failedFirst) {
    const last = outcomes.get(block);
    if (last !== undefined && !failed(last)) console.log(`docs examples: ${blockName(block)} passed on its second run; the first:\n${report(first)}`);
  }
}, 600_000);

afterAll(async () => {
  await Promise.all(lanes.map((nodes) => nodes.stopAll()));
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

function report(outcome: RunOutcome | undefined): string {
  if (outcome === undefined) return 'not run';
  const how = outcome.timedOut ? 'did not exit by itself in time' : `exited with code ${outcome.code}${outcome.signal === null ? '' : ` (${outcome.signal})`}`;
  return `${how}\n--- stderr (line numbers of the run: the block's first line is line 2) ---\n${outcome.stderr}\n--- stdout ---\n${outcome.stdout}`;
}

describe('the docs examples', () => {
  it('finds the blocks', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((block) => [blockName(block), block] as const))('%s type-checks under strict', (_name, block) => {
    expect(checked.get(block)?.errors).toEqual([]);
  });

  it.each(runnable.map((block) => [blockName(block), block] as const))('%s runs and exits by itself with code 0', (_name, block) => {
    const outcome = outcomes.get(block);
    const first = failedFirst.get(block);
    expect(outcome !== undefined && !failed(outcome), first === undefined ? report(outcome) : `${report(outcome)}\n--- its first run ---\n${report(first)}`).toBe(true);
  });
});

describe('the checks have teeth', () => {
  it('refuses an unknown caught error, naming the line (so strict is on)', () => {
    expect(checked.get(canaries.unknownCatch)?.errors).toEqual([expect.stringMatching(/^canary\.md:5:15: TS18046: 'error' is of type 'unknown'/)]);
  });

  it('declares only the reader’s names a block uses, and names one that is missing', () => {
    const result = checked.get(canaries.undeclared);
    expect(result?.declared).toEqual(['chargeCustomer']);
    expect(result?.errors).toEqual([expect.stringMatching(/^canary\.md:3:\d+: TS2304: Cannot find name 'somethingNobodyDeclared'.*userNames\.ts/)]);
  });

  it("resolves 'quorumlock' to the source and checks what it exports", () => {
    expect(checked.get(canaries.notExported)?.errors).toEqual([expect.stringMatching(/TS2694: Namespace .* has no exported member 'NotExported'/)]);
  });

  it('checks a JavaScript block too', () => {
    expect(checked.get(canaries.jsChecked)?.errors).toEqual([expect.stringMatching(/^canary\.md:3:\d+: TS2339: Property 'toUpperCase' does not exist/)]);
  });

  it('runs a block against five distinct, flushed servers on localhost:6379..6383, with quorumlock from src/', () => {
    expect(checked.get(canaries.ports)?.errors).toEqual([]);
    const outcome = outcomes.get(canaries.ports);
    expect(outcome !== undefined && !failed(outcome), report(outcome)).toBe(true);
  });

  it('fails a block that throws, with its stderr, when its second run throws too', () => {
    const outcome = outcomes.get(canaries.throws);
    expect(outcome?.code).not.toBe(0);
    expect(outcome?.stderr).toMatch(/AssertionError/);
    expect(failedFirst.get(canaries.throws)?.stderr).toMatch(/AssertionError/);
  });

  it('fails a block that does not exit by itself', () => {
    expect(outcomes.get(canaries.hangs)?.timedOut).toBe(true);
  });
});
