/**
 * Type-checks the docs' blocks as a user's own strict project would, in one
 * program, with `quorumlock` mapped to src/, so the published examples cannot
 * drift from the published types.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { USER_NAMES } from '../userNames.js';
import { type Block, ROOT } from './blocks.js';

/** The settings of a strict user project; `quorumlock` is the source, not dist/. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  // Each block is a module of its own, even one without an import.
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: ['node'],
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
  noEmit: true,
  paths: { quorumlock: [join(ROOT, 'src/index.ts')], 'quorumlock/testing': [join(ROOT, 'src/testing/index.ts')] },
};

// src/ imports its Lua sources; their module declaration is not reached by imports.
const AMBIENT_FILES = [join(ROOT, 'src/scripts/lua.d.ts')];

// "Cannot find name", its "Did you mean" variant, and a shorthand property without a value.
const UNDECLARED_NAME_CODES = new Set([2304, 2552, 18004]);

export interface Checked {
  readonly errors: readonly string[];
  /** The reader's names (USER_NAMES) the block uses. */
  readonly declared: readonly string[];
}

/** The one-line preamble a block of the reader's program gets: declarations to check it, stubs to run it. */
export function preamble(names: readonly string[], kind: 'declaration' | 'stub'): string {
  return `${names.map((name) => USER_NAMES[name]?.[kind] ?? '').join(' ')}\n`;
}

export function checkBlocks(blocks: readonly Block[]): Map<Block, Checked> {
  // In the project's directory, so its package.json makes each block an ES module.
  const fileOf = (block: Block) => join(ROOT, `${block.source}.block-${blocks.indexOf(block)}.${block.language}`);
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
    for (const block of blocks) texts.set(fileOf(block), (preambles.get(block) ?? '\n') + block.code);
    return ts.createProgram({ rootNames: [...AMBIENT_FILES, ...texts.keys()], options: COMPILER_OPTIONS, host, oldProgram });
  };
  const diagnosticsOf = (program: ts.Program, block: Block) => {
    const file = program.getSourceFile(fileOf(block));
    if (file === undefined) throw new Error(`${block.source} line ${block.line}: the block was not compiled`);
    return { file, diagnostics: [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)] };
  };

  // First pass: which of the reader's names each block leaves undeclared.
  const first = compile(new Map());
  const preambles = new Map<Block, string>();
  const declaredBy = new Map<Block, string[]>();
  for (const block of blocks) {
    const { file, diagnostics } = diagnosticsOf(first, block);
    const names = new Set<string>();
    for (const d of diagnostics) {
      if (!UNDECLARED_NAME_CODES.has(d.code) || d.start === undefined || d.length === undefined) continue;
      const name = file.text.slice(d.start, d.start + d.length);
      // A JavaScript block cannot take TypeScript's declarations: it declares what it uses.
      if (block.language === 'ts' && Object.hasOwn(USER_NAMES, name)) names.add(name);
    }
    const declared = [...names].sort();
    declaredBy.set(block, declared);
    preambles.set(block, preamble(declared, 'declaration'));
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
      if (line === 0) return `${block.source} line ${block.line} (declarations from test/docs/userNames.ts): TS${d.code}: ${message}`;
      const hint = UNDECLARED_NAME_CODES.has(d.code)
        ? ' (import it, declare it in the block, or, if it is the reader’s own, add it to test/docs/userNames.ts)'
        : '';
      return `${block.source}:${block.line + line - 1}:${character + 1}: TS${d.code}: ${message}${hint}`;
    });
    results.set(block, { errors, declared: declaredBy.get(block) ?? [] });
  }
  return results;
}
