/**
 * The code the docs show a user: every ```ts / ```js block of README.md and
 * docs/ (not the generated API reference), and every program in examples/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '../../..');

export interface Block {
  /** File the block comes from, relative to the repository. */
  readonly source: string;
  /** Line of the block's first line of code in that file (1-based). */
  readonly line: number;
  readonly language: 'ts' | 'js';
  /** Marked ```ts fragment: type-checked only, never run. */
  readonly fragment: boolean;
  readonly code: string;
  /** For a file of examples/: run where it is, so its own relative imports work. */
  readonly path?: string;
}

export function blockName(block: Block): string {
  return `${block.source}:${block.line}`;
}

const LANGUAGES: Readonly<Record<string, 'ts' | 'js'>> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };

/** The info string's first word is the language (as VitePress reads it); `fragment` anywhere after it marks a fragment. */
export function extractBlocks(markdown: string, source: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,}|~{3,})\s*([^\s`{]*)([^`]*)$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const [, indent = '', fence = '', language = '', rest = ''] = open;
    // Markdown closes a fence with at least as many of the same characters,
    // and takes the opening fence's indentation off the lines inside.
    const close = new RegExp(`^ *${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const dedent = new RegExp(`^ {0,${indent.length}}`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !close.test(lines[j] ?? ''); j++) body.push((lines[j] ?? '').replace(dedent, ''));
    const kind = LANGUAGES[language.toLowerCase()];
    if (kind !== undefined) {
      blocks.push({ source, line: i + 2, language: kind, fragment: /(^|\s)fragment(\s|$)/.test(rest), code: body.join('\n') });
    }
    i = j;
  }
  return blocks;
}

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // The API reference is TypeDoc's output; .vitepress holds the site's own code and build.
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !(dir === join(ROOT, 'docs') && entry.name === 'api')) found.push(...markdownFiles(path));
    } else if (entry.name.endsWith('.md')) found.push(path);
  }
  return found.sort();
}

/** README.md and every page of docs/ that a person writes. */
export function docsPages(): string[] {
  return [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];
}

export function collectBlocks(): Block[] {
  const fromPages = docsPages().flatMap((path) => extractBlocks(readFileSync(path, 'utf8'), relative(ROOT, path)));
  const examplesDir = join(ROOT, 'examples');
  const examples = readdirSync(examplesDir)
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .map((name): Block => {
      const path = join(examplesDir, name);
      return { source: `examples/${name}`, line: 1, language: 'ts', fragment: false, code: readFileSync(path, 'utf8'), path };
    });
  return [...fromPages, ...examples];
}
