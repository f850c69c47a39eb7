import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

// Typechecks every ```ts block of README.md as a user's own strict project
// would, with `quorumlock` mapped to src/index.ts, so the published examples
// cannot drift from the published types.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const readmePath = join(root, 'README.md');

/**
 * What the snippets take from the reader's own program, one declaration per
 * name. A block gets exactly the ones it uses without declaring or importing
 * them itself; a name that is in neither fails the block, so a new snippet
 * cannot lean on an undeclared global unnoticed. Library names do not belong
 * here: a snippet imports those, as its reader must.
 */
const USER_DECLARATIONS: Readonly<Record<string, string>> = {
  chargeCustomer: 'declare function chargeCustomer(options: { signal: AbortSignal }): Promise<void>;',
  markPaid: 'declare function markPaid(): Promise<void>;',
  moveStock: 'declare function moveStock(): Promise<void>;',
  clients: "declare const clients: import('ioredis').Redis[];",
  // node-postgres's Pool#query, reduced to what the snippets use.
  db: 'declare const db: { query(text: string, values: unknown[]): Promise<{ rowCount: number | null }> };',
  id: 'declare const id: string;',
  // prom-client's Histogram#observe.
  histogram: 'declare const histogram: { observe(labels: Record<string, string>, value: number): void };',
};

/** The settings of a strict user project; `quorumlock` is the source, not dist/. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  // Each block is a module of its own, even one without an import.
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: ['node'],
  skipLibCheck: true,
  noEmit: true,
  paths: { quorumlock: [join(root, 'src/index.ts')], 'quorumlock/testing': [join(root, 'src/testing/index.ts')] },
};

// src/ imports its Lua sources; their module declaration is not reached by imports.
const AMBIENT_FILES = [join(root, 'src/scripts/lua.d.ts')];

// "Cannot find name", its "Did you mean" variant, and a shorthand property without a value.
const UNDECLARED_NAME_CODES = new Set([2304, 2552, 18004]);

interface Block {
  /** Where the block comes from, for messages. */
  readonly source: string;
  /** The `## ` heading the block is under. */
  readonly section: string;
  /** README line of the block's first line of code (1-based). */
  readonly line: number;
  readonly code: string;
}

function extractTsBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## +(.+?)\s*$/.exec(lines[i] ?? '');
    if (heading !== null) section = heading[1] ?? '';
    const open = /^( *)(`{3,}|~{3,})\s*(\S*)/.exec(lines[i] ?? '');
    if (open === null) continue;
    const [, indent = '', fence = '', language = ''] = open;
    // Markdown closes a fence with at least as many of the same characters,
    // and takes the opening fence's indentation off the lines inside.
    const close = new RegExp(`^ *${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const dedent = new RegExp(`^ {0,${indent.length}}`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !close.test(lines[j] ?? ''); j++) body.push((lines[j] ?? '').replace(dedent, ''));
    if (/^(ts|typescript)$/i.test(language)) blocks.push({ source: 'README.md', section, line: i + 2, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

interface Checked {
  readonly errors: readonly string[];
  /** The names USER_DECLARATIONS supplied. */
  readonly declared: readonly string[];
}

/** Typechecks the blocks in one program; each block's errors name README lines. */
function checkBlocks(blocks: readonly Block[]): Map<Block, Checked> {
  // In the project's directory, so its package.json makes each block an ES module.
  const fileOf = (block: Block) => join(root, `${block.source}.block-${blocks.indexOf(block)}.ts`);
  const host = ts.createCompilerHost(COMPILER_OPTIONS, true);
  const texts = new Map<string, string>();
  const baseGetSourceFile = host.getSourceFile.bind(host);
  const baseFileExists = host.fileExists.bind(host);
  const baseReadFile = host.readFile.bind(host);
  host.fileExists = (name) => texts.has(name) || baseFileExists(name);
  host.readFile = (name) => texts.get(name) ?? baseReadFile(name);
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const text = texts.get(name);
    return text === undefined
      ? baseGetSourceFile(name, languageVersion, onError, shouldCreate)
      : ts.createSourceFile(name, text, languageVersion, true);
  };

  const compile = (preambles: ReadonlyMap<Block, string>, oldProgram?: ts.Program) => {
    texts.clear();
    for (const block of blocks) texts.set(fileOf(block), (preambles.get(block) ?? '') + block.code);
    return ts.createProgram({ rootNames: [...AMBIENT_FILES, ...texts.keys()], options: COMPILER_OPTIONS, host, oldProgram });
  };
  const diagnosticsOf = (program: ts.Program, block: Block) => {
    const file = program.getSourceFile(fileOf(block));
    if (file === undefined) throw new Error(`${block.source} line ${block.line}: the block was not compiled`);
    return { file, diagnostics: [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)] };
  };

  // First pass: which of the user's names each block leaves undeclared.
  const first = compile(new Map());
  const preambles = new Map<Block, string>();
  const declaredBy = new Map<Block, string[]>();
  for (const block of blocks) {
    const { file, diagnostics } = diagnosticsOf(first, block);
    const names = new Set<string>();
    for (const d of diagnostics) {
      if (!UNDECLARED_NAME_CODES.has(d.code) || d.start === undefined || d.length === undefined) continue;
      const name = file.text.slice(d.start, d.start + d.length);
      if (Object.hasOwn(USER_DECLARATIONS, name)) names.add(name);
    }
    const declared = [...names].sort();
    declaredBy.set(block, declared);
    // One line, so every line of the block keeps its number plus one.
    preambles.set(block, `${declared.map((name) => USER_DECLARATIONS[name]).join(' ')}\n`);
  }

  // Second pass: the blocks with their preambles; anything left is the block's fault.
  const second = compile(preambles, first);
  const global = [...second.getOptionsDiagnostics(), ...second.getGlobalDiagnostics()];
  if (global.length > 0) throw new Error(global.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));
  const results = new Map<Block, Checked>();
  for (const block of blocks) {
    const { file, diagnostics } = diagnosticsOf(second, block);
    const errors = diagnostics.map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (d.start === undefined) return `${block.source}: TS${d.code}: ${message}`;
      const { line, character } = file.getLineAndCharacterOfPosition(d.start);
      if (line === 0) return `${block.source} line ${block.line} (declarations from USER_DECLARATIONS): TS${d.code}: ${message}`;
      const hint = UNDECLARED_NAME_CODES.has(d.code)
        ? ' (import it, declare it in the block, or, if it is the reader’s own, add it to USER_DECLARATIONS in this test)'
        : '';
      return `${block.source}:${block.line + line - 1}:${character + 1}: TS${d.code}: ${message}${hint}`;
    });
    results.set(block, { errors, declared: declaredBy.get(block) ?? [] });
  }
  return results;
}

const readmeBlocks = extractTsBlocks(readFileSync(readmePath, 'utf8'));

describe('README ```ts blocks typecheck under strict', () => {
  // The canaries ride in the same program as the README's blocks: they show
  // that the check has teeth without paying for a second compilation.
  const canaryUnknownCatch: Block = {
    source: 'canary.md',
    section: '',
    line: 1,
    code: "try {\n  JSON.parse('x');\n} catch (error) {\n  console.log(error.message);\n}",
  };
  const canaryUndeclared: Block = {
    source: 'canary.md',
    section: '',
    line: 1,
    code: 'await chargeCustomer({ signal: AbortSignal.timeout(1) });\nawait somethingNobodyDeclared();',
  };
  const canaryImport: Block = {
    source: 'canary.md',
    section: '',
    line: 1,
    code: "import { RedisLock } from 'quorumlock';\nexport const x: RedisLock | undefined = undefined;\nexport const y: typeof import('quorumlock').NotExported = 1;",
  };
  let results: Map<Block, Checked>;

  // About 3 s on a quiet 2-core machine; the rest of the suite may be running beside it.
  beforeAll(() => {
    results = checkBlocks([...readmeBlocks, canaryUnknownCatch, canaryUndeclared, canaryImport]);
  }, 120_000);

  it('finds the blocks', () => {
    expect(readmeBlocks.length).toBeGreaterThanOrEqual(3);
  });

  it.each(readmeBlocks.map((block) => [block.line, block.section, block] as const))(
    'the block at README.md line %i (%s)',
    (_line, _section, block) => {
      expect(results.get(block)?.errors).toEqual([]);
    },
  );

  it('refuses an unknown caught error, naming the line (so strict is on)', () => {
    expect(results.get(canaryUnknownCatch)?.errors).toEqual([
      expect.stringMatching(/^canary\.md:4:15: TS18046: 'error' is of type 'unknown'/),
    ]);
  });

  it('declares only the user names a block uses, and names one that is missing', () => {
    const checked = results.get(canaryUndeclared);
    expect(checked?.declared).toEqual(['chargeCustomer']);
    expect(checked?.errors).toEqual([expect.stringMatching(/^canary\.md:2:\d+: TS2304: Cannot find name 'somethingNobodyDeclared'.*USER_DECLARATIONS/)]);
  });

  it("resolves 'quorumlock' to the source and checks what it exports", () => {
    expect(results.get(canaryImport)?.errors).toEqual([expect.stringMatching(/TS2694: Namespace .* has no exported member 'NotExported'/)]);
  });
});
