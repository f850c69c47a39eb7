/**
 * The site's pages in reading order, one source for the sidebar and for the
 * test that no page under docs/ is left out of it. A page not written yet is
 * left out of the sidebar, so the site builds at every step of its writing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DOCS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface PageGroup {
  readonly text: string;
  /** Paths under docs/ without `.md`. */
  readonly pages: readonly string[];
}

const GROUPS: readonly PageGroup[] = [
  { text: 'Introduction', pages: ['guide/getting-started', 'guide/choosing-a-lock'] },
  {
    text: 'Primitives',
    pages: ['guide/locks', 'guide/semaphore', 'guide/read-write-lock', 'guide/reentrancy', 'guide/fencing', 'guide/many-locks'],
  },
  { text: 'Behaviour', pages: ['guide/waiting', 'guide/failover', 'guide/shutdown', 'guide/safety'] },
  { text: 'Operating', pages: ['guide/errors', 'guide/diagnostics', 'guide/cli', 'guide/testing', 'guide/benchmarks', 'guide/faq'] },
  { text: 'Migrating', pages: ['migrating/node-redlock', 'migrating/redis-semaphore', 'migrating/redlock-universal'] },
];

/** Contributors' notes: every page of docs/design/, by file name. */
function designPages(): string[] {
  const dir = join(DOCS_DIR, 'design');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `design/${name.slice(0, -'.md'.length)}`);
}

export function pageExists(page: string): boolean {
  return existsSync(join(DOCS_DIR, `${page}.md`));
}

/** Every group with the pages that exist, empty groups left out. */
export function pageGroups(): PageGroup[] {
  return [...GROUPS, { text: 'Design notes', pages: designPages() }]
    .map((group) => ({ text: group.text, pages: group.pages.filter(pageExists) }))
    .filter((group) => group.pages.length > 0);
}

/** A page's first `# ` heading, its title in the sidebar. */
export function pageTitle(page: string): string {
  const text = readFileSync(join(DOCS_DIR, `${page}.md`), 'utf8');
  const heading = /^# +(.+?)\s*$/m.exec(text);
  return heading?.[1]?.replace(/`/g, '') ?? page;
}

/** Whether the API reference (TypeDoc's output) is in the site. */
export function hasApiReference(): boolean {
  return existsSync(join(DOCS_DIR, 'api'));
}
