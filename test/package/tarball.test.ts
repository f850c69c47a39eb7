/**
 * The packed tarball, installed in fresh projects as a user's would be:
 * one with neither ioredis nor redis, one with redis alone, one with Valkey
 * GLIDE alone. A program on node-redis, one on GLIDE and one of users' own
 * tests (fixtures/) are type-checked there (strict, nodenext, against the
 * tarball's declarations) and run: the in-memory one with no Redis server at
 * all. (The docs' own examples run against src/: test/docs/examples.test.ts.)
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'fixtures');
const TESTING_GUIDE = join(ROOT, 'docs/guide/testing.md');

let work: string;
let tarball: string;
/** Each project's name and the packages installed beside the tarball. */
const PROJECTS: readonly (readonly [string, readonly string[]])[] = [
  ['bare', []],
  ['node-redis', ['redis@6']],
  ['glide', ['@valkey/valkey-glide@2']],
];
const installs = new Map<string, Promise<string>>();

/** The project `name`, once installed (PROJECTS). */
function installed(name: string): Promise<string> {
  const install = installs.get(name);
  if (install === undefined) throw new Error(`no project ${name}`);
  return install;
}

/** A program of fixtures/, as a user of the installed package writes it. */
function fixture(file: string): Promise<string> {
  return readFile(join(FIXTURES, file), 'utf8');
}

/** Every runnable ```ts block of a markdown file (not the `ts fragment` ones), with the heading it is under. */
async function runnableBlocks(file: string): Promise<{ heading: string; code: string }[]> {
  const lines = (await readFile(file, 'utf8')).split('\n');
  const blocks: { heading: string; code: string }[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('#')) heading = line;
    if (line.trim() !== '```ts') continue;
    const close = lines.findIndex((other, j) => j > i && other.startsWith('```'));
    blocks.push({ heading, code: lines.slice(i + 1, close).join('\n') });
    i = close;
  }
  return blocks;
}

/** A fresh project with the tarball and `extra` packages installed from the npm cache. */
async function project(name: string, extra: readonly string[]): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', '--ignore-scripts', tarball, ...extra], {
    cwd: dir,
    timeout: 240_000,
  });
  // Types for the snippets' console and process, as a user's project has them.
  // GLIDE brings its own (a dependency of it).
  await mkdir(join(dir, 'node_modules/@types'), { recursive: true });
  if (!existsSync(join(dir, 'node_modules/@types/node'))) await symlink(join(ROOT, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'));
  return dir;
}

/** Type-checks `code` as a strict nodenext project in `dir`; resolves to the diagnostics. */
function typecheck(dir: string, file: string, code: string, checkLibraries: boolean): string[] {
  const path = join(dir, file);
  const options: ts.CompilerOptions = {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    noEmit: true,
    // Checked where the declarations must stand without ioredis; node-redis's own are large and not ours.
    skipLibCheck: !checkLibraries,
  };
  const host = ts.createCompilerHost(options, true);
  const readFileBase = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => (name === path ? code : readFileBase(name));
  host.fileExists = (name) => name === path || fileExists(name);
  const program = ts.createProgram({ rootNames: [path], options, host });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** `code` as JavaScript Node 20 runs (`await using` lowered), with console.assert that throws. */
async function writeRunnable(dir: string, file: string, code: string): Promise<string> {
  const { outputText } = ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } });
  const strictAssert = "console.assert = (ok, ...what) => { if (!ok) throw new Error('assertion failed: ' + what.join(' ')); };\n";
  await writeFile(join(dir, file), strictAssert + outputText);
  return join(dir, file);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'quorumlock-package-'));
  // npm pack builds dist/ first (the package's prepare script).
  const { stdout } = await run('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: ROOT, timeout: 300_000 });
  tarball = join(work, stdout.trim().split('\n').at(-1) ?? '');
  // The three projects install at once (each waits on npm, not the CPU); each describe takes its own.
  for (const [name, extra] of PROJECTS) {
    const installing = project(name, extra);
    installing.catch(() => undefined);
    installs.set(name, installing);
  }
}, 360_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('installed with neither ioredis nor redis', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await installed('bare');
  }, 300_000);

  it('imports (ESM and CommonJS) without either client, and the first use names the clients it takes', async () => {
    expect(existsSync(join(dir, 'node_modules/ioredis'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules/redis'))).toBe(false);
    const script = [
      "import { RedisLock } from 'quorumlock';",
      "import { createRequire } from 'node:module';",
      "const cjs = createRequire(import.meta.url)('quorumlock');",
      "if (typeof cjs.Redlock !== 'function') throw new Error('no CommonJS build');",
      'try { new RedisLock(undefined); } catch (error) { console.log(error.code, error.message); }',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
    expect(stdout).toMatch(/^QUORUMLOCK_INVALID_ARGUMENT Invalid client: expected an ioredis client .*, a node-redis client .* or a Valkey GLIDE client, got undefined/);
  });

  // (Was test/cli/build.test.ts, which ran a build of its own for it: the pack above has built it.)
  it('installs the "bin" of package.json as an executable ESM file with a node shebang, which finds its package.json', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin?: Record<string, string> };
    expect(pkg.bin?.['quorumlock']).toBe('dist/cli.js');
    const bin = join(dir, 'node_modules/quorumlock', pkg.bin?.['quorumlock'] ?? '');
    expect((await readFile(bin, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect((await stat(bin)).mode & 0o111).not.toBe(0);
    // Run where ioredis is installed (the command line needs it): the project's own dist/,
    // which the pack built, byte for byte the file installed here.
    const built = join(ROOT, pkg.bin?.['quorumlock'] ?? '');
    expect(await readFile(built, 'utf8')).toBe(await readFile(bin, 'utf8'));
    const { stdout } = await run(built, ['exec', '--help'], { cwd: ROOT });
    expect(stdout).toMatch(/Usage: quorumlock exec \[options\] RESOURCE -- COMMAND/);
    const { stdout: version } = await run(built, ['--version'], { cwd: ROOT });
    expect(version.trim()).toBe(pkg.version);
  });

  it('says the command line needs ioredis', async () => {
    const failure = await run(join(dir, 'node_modules/.bin/quorumlock'), ['status', 'x'], { cwd: dir }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 69, stderr: expect.stringContaining('needs the ioredis package: npm install ioredis') });
  });

  it("runs a user's own tests on the in-memory node, with no Redis server", async () => {
    const code = await fixture('users-tests.ts');
    expect(typecheck(dir, 'users-tests.ts', code, true)).toEqual([]);
    const file = await writeRunnable(dir, 'users-tests.mjs', code);
    // A process of its own that must end by itself: no timer or connection is left behind.
    await run(process.execPath, [file], { cwd: dir, timeout: 20_000 });
  }, 120_000);
});

describe("the testing guide's examples, from the installed tarball, with no redis-server on PATH", () => {
  let dir: string;
  let path: string;
  beforeAll(async () => {
    dir = await installed('bare');
    // Only node on PATH: no redis-server could be started, nor is one needed.
    path = join(dir, 'bin-without-redis');
    await mkdir(path, { recursive: true });
    await symlink(process.execPath, join(path, 'node'));
  }, 300_000);

  it('has the examples the guide promises: a lock, a Redlock over 5 nodes with one down, a semaphore, a read-write lock', async () => {
    const headings = (await runnableBlocks(TESTING_GUIDE)).map((block) => block.heading);
    for (const heading of ['## A lock', '## Redlock over five nodes, one of them down', '## A semaphore', '## A read-write lock']) expect(headings).toContain(heading);
    expect(existsSync(join(dir, 'node_modules/quorumlock/node_modules/wasmoon')) || existsSync(join(dir, 'node_modules/wasmoon'))).toBe(true);
  });

  it("the main entry never reaches the Lua VM: wasmoon is only imported by quorumlock/testing", async () => {
    const dist = join(dir, 'node_modules/quorumlock/dist');
    const reached = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (reached.has(file)) return;
      reached.add(file);
      const code = await readFile(join(dist, file), 'utf8');
      for (const [, chunk] of code.matchAll(/(?:from |require\()"\.\/([^"]+)"/g)) await visit(chunk as string);
    };
    for (const entry of ['index.js', 'index.cjs']) await visit(entry);
    for (const file of reached) expect(await readFile(join(dist, file), 'utf8'), file).not.toContain('wasmoon');
    expect(await readFile(join(dist, 'testing.js'), 'utf8')).toContain('wasmoon');
  });

  it('type-checks and runs every example, each in a process of its own that ends by itself', async () => {
    const blocks = await runnableBlocks(TESTING_GUIDE);
    for (const [i, { heading, code }] of blocks.entries()) {
      expect(typecheck(dir, `guide-${i}.ts`, code, true), heading).toEqual([]);
      const file = await writeRunnable(dir, `guide-${i}.mjs`, code);
      // A waiting acquire keeps the process alive (the first example waits for a TTL to run out): exit code 0, not 13.
      await expect(run(process.execPath, [file], { cwd: dir, timeout: 20_000, env: { PATH: path, HOME: dir } }), heading).resolves.toBeDefined();
    }
  }, 180_000);
});

/**
 * Type-checks the client program `file` (fixtures/) in `dir` and runs it
 * against `nodes` (its first for one server, all for a Redlock), in a process
 * of its own that must end by itself once the program closes its clients.
 */
async function runClientProgram(dir: string, file: string, nodes: LocalNodeSet): Promise<void> {
  // The module both client programs share, beside them as in a user's project.
  const shared = await fixture('useLocks.ts');
  await writeFile(join(dir, 'useLocks.ts'), shared);
  await writeRunnable(dir, 'useLocks.js', shared);
  const code = await fixture(`${file}.ts`);
  expect(typecheck(dir, `${file}.ts`, code, false)).toEqual([]);
  const runnable = await writeRunnable(dir, `${file}.mjs`, code);
  const { stdout } = await run(process.execPath, [runnable], {
    cwd: dir,
    timeout: 30_000,
    env: { ...process.env, REDIS_URL: nodes.urls[0], REDIS_URLS: nodes.urls.join(',') },
  });
  expect(stdout).toContain('charged 42 under the lock');
  expect(stdout).toMatch(/holds cron:nightly on a quorum of 3/);
}

describe.each([
  { client: 'redis', file: 'node-redis' },
  { client: '@valkey/valkey-glide', file: 'glide' },
])('installed with $client alone', ({ client, file }) => {
  let dir: string;
  let nodes: LocalNodeSet;
  beforeAll(async () => {
    [dir, nodes] = await Promise.all([installed(file), startNodes(3)]);
  }, 300_000);
  afterAll(async () => {
    await nodes?.stopAll();
  });

  it(`type-checks and runs fixtures/${file}.ts`, async () => {
    const installed = await readdir(join(dir, 'node_modules'));
    expect(installed.includes('ioredis')).toBe(false);
    expect(existsSync(join(dir, 'node_modules', client))).toBe(true);
    for (const other of ['redis', '@valkey/valkey-glide'].filter((name) => name !== client)) expect(existsSync(join(dir, 'node_modules', other))).toBe(false);
    await runClientProgram(dir, file, nodes);
  }, 120_000);
});
