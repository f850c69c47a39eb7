/**
 * Every internal link of README.md and docs/ and the anchors they name,
 * read with VitePress's own markdown renderer, so a heading's id is the one
 * the site gives it (its slugify, `{#custom-id}`, duplicates numbered).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import { createMarkdownRenderer, type MarkdownRenderer } from 'vitepress';
import { ROOT } from './blocks.js';

const DOCS = join(ROOT, 'docs');
/**
 * The API reference: TypeDoc writes it here (`npm run docs:api`; gitignored).
 * Where it is built, links into it are checked like any other; where it is
 * not (a fresh clone's `npm test`), a link to its root is taken as it is,
 * since TypeDoc always writes the root's index, and any deeper link fails.
 */
const API_REFERENCE = join(DOCS, 'api');

export interface Link {
  readonly source: string;
  readonly line: number;
  readonly href: string;
}

export interface Page {
  readonly links: readonly Link[];
  readonly ids: ReadonlySet<string>;
}

interface Token {
  type: string;
  content: string;
  map: [number, number] | null;
  children: Token[] | null;
  attrGet(name: string): string | null;
}

export async function renderer(): Promise<MarkdownRenderer> {
  return createMarkdownRenderer(DOCS, {}, '/', { warn: () => undefined });
}

/**
 * Links and ids of one markdown file. A page of docs/ has the ids the site
 * gives its headings; any other file (README.md, bench/README.md) is read on
 * GitHub and npm, so its headings get GitHub's.
 */
export function readPage(md: MarkdownRenderer, path: string): Page {
  const onSite = !relative(DOCS, path).startsWith('..');
  const github = new GithubSlugger();
  const source = relative(ROOT, path);
  const text = readFileSync(path, 'utf8');
  const tokens = md.parse(text, { path, relativePath: relative(DOCS, path), cleanUrls: true }) as unknown as Token[];
  const links: Link[] = [];
  const ids = new Set<string>();
  const fromHtml = (html: string, line: number) => {
    for (const match of html.matchAll(/\s(?:id|name)="([^"]+)"/g)) if (match[1] !== undefined) ids.add(match[1]);
    for (const match of html.matchAll(/<a\s[^>]*href="([^"]+)"/g)) if (match[1] !== undefined) links.push({ source, line, href: match[1] });
  };
  const walk = (list: readonly Token[], line: number) => {
    for (const token of list) {
      const at = token.map === null ? line : token.map[0] + 1;
      if (token.type === 'heading_open' && onSite) {
        const id = token.attrGet('id');
        if (id !== null) ids.add(id);
      }
      if (token.type === 'inline' && !onSite && list[list.indexOf(token) - 1]?.type === 'heading_open') {
        ids.add(github.slug(plainText(token.children ?? [])));
      }
      // The permalink VitePress's anchor plugin gives each heading is its own.
      const permalink = (token.attrGet('class') ?? '').includes('header-anchor');
      if (token.type === 'link_open' && !permalink) links.push({ source, line: at, href: token.attrGet('href') ?? '' });
      if (token.type === 'image') links.push({ source, line: at, href: token.attrGet('src') ?? '' });
      if (token.type === 'html_block' || token.type === 'html_inline') fromHtml(token.content, at);
      if (token.children !== null) walk(token.children, at);
    }
  };
  walk(tokens, 1);
  // The home page's hero and feature links live in its front matter.
  for (const match of text.matchAll(/^\s*link:\s*(\S+)\s*$/gm)) {
    links.push({ source, line: text.slice(0, match.index).split('\n').length, href: match[1] ?? '' });
  }
  return { links, ids };
}

/** A heading's text as GitHub slugs it: without the permalink VitePress's anchor plugin appends. */
function plainText(tokens: readonly Token[]): string {
  let text = '';
  let inPermalink = false;
  for (const token of tokens) {
    if (token.type === 'link_open' && (token.attrGet('class') ?? '').includes('header-anchor')) inPermalink = true;
    else if (token.type === 'link_close' && inPermalink) inPermalink = false;
    else if (!inPermalink && (token.type === 'text' || token.type === 'code_inline')) text += token.content;
  }
  return text.trim();
}

export function isInternal(href: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('//');
}

/**
 * The file a link points at: relative to its page, or, for a path starting
 * with `/`, to the site's root (docs/, then docs/public/). A path without an
 * extension is a page (VitePress's clean URLs) or a directory's index.md.
 */
export function targetOf(link: Link): string | undefined {
  const [path = ''] = link.href.split('#');
  if (path === '') return join(ROOT, link.source);
  const base = path.startsWith('/') ? DOCS : dirname(join(ROOT, link.source));
  const full = path.startsWith('/') ? join(base, path) : resolve(base, decodeURIComponent(path));
  const candidates = [full, `${full}.md`, join(full, 'index.md'), ...(path.startsWith('/') ? [join(DOCS, 'public', path)] : [])];
  for (const candidate of candidates) {
    if (existsSync(candidate) && (statSync(candidate).isFile() || existsSync(join(candidate, 'index.md')) || !path.startsWith('/'))) return candidate;
  }
  return undefined;
}

/** What is wrong with a link, or undefined when it resolves (its anchor too). */
export function brokenReason(link: Link, pages: ReadonlyMap<string, Page>, read?: (path: string) => Page): string | undefined {
  if (!isInternal(link.href)) return undefined;
  if (link.href === '') return 'empty link';
  const [path = ''] = link.href.split('#');
  if (!path.startsWith('/') && relative(ROOT, resolve(dirname(join(ROOT, link.source)), path)).startsWith('..')) return 'outside the repository';
  const target = targetOf(link);
  if (target === undefined) {
    if (!existsSync(API_REFERENCE) && path !== '' && !path.startsWith('/') && resolve(dirname(join(ROOT, link.source)), path) === API_REFERENCE) {
      return link.href.includes('#') ? 'an anchor into the API reference, which is not built (npm run docs:api)' : undefined;
    }
    return 'no such file';
  }
  const anchor = link.href.includes('#') ? decodeURIComponent(link.href.slice(link.href.indexOf('#') + 1)) : '';
  if (anchor === '') return undefined;
  const page = pages.get(target) ?? (target.endsWith('.md') ? read?.(target) : undefined);
  if (page === undefined) return target.endsWith('.md') ? 'anchor into a page that was not read' : undefined;
  return page.ids.has(anchor) ? undefined : `no heading or id #${anchor} in ${relative(ROOT, target)}`;
}
