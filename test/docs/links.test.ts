/**
 * Every internal link and #anchor of README.md and docs/ resolves: in the
 * markdown (below), and, where `npm run docs` has built the site, in its HTML
 * (scripts/docs/siteLinks.ts, also `npm run docs:check`).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkSite, SITE_DIR } from '../../scripts/docs/siteLinks.js';
import { docsPages, ROOT } from './support/blocks.js';
import { brokenReason, type Link, type Page, readPage, renderer } from './support/markdownLinks.js';
import { DOCS_DIR, pageGroups } from '../../docs/.vitepress/pages.js';

const pages = new Map<string, Page>();
/** Another markdown file of the repository a link names an anchor of (bench/README.md, say). */
let read: (path: string) => Page;

beforeAll(async () => {
  const md = await renderer();
  read = (path) => readPage(md, path);
  for (const path of docsPages()) pages.set(path, read(path));
}, 60_000);

const describeLink = (link: Link, reason: string) => `${link.source}:${link.line}: ${link.href}: ${reason}`;

describe('the docs’ markdown links', () => {
  it('reads README.md and the pages of docs/', () => {
    expect(pages.has(join(ROOT, 'README.md'))).toBe(true);
    expect([...pages.values()].some((page) => page.links.length > 0)).toBe(true);
  });

  it('every internal link and anchor resolves', () => {
    const broken = [...pages.values()].flatMap((page) =>
      page.links.flatMap((link) => {
        const reason = brokenReason(link, pages, read);
        return reason === undefined ? [] : [describeLink(link, reason)];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('names a broken page, a broken anchor and a link that leaves the repository (so the check has teeth)', () => {
    const source = 'docs/index.md';
    const reasons = ['./guide/no-such-page.md', '#no-such-heading', '../../outside.md'].map((href) => brokenReason({ source, line: 1, href }, pages, read));
    expect(reasons).toEqual(['no such file', expect.stringMatching(/^no heading or id #no-such-heading/), 'outside the repository']);
  });

  it('every page of docs/ is in the sidebar', () => {
    const listed = new Set(pageGroups().flatMap((group) => group.pages.map((page) => join(DOCS_DIR, `${page}.md`))));
    const unlisted = [...pages.keys()].filter((path) => path.startsWith(DOCS_DIR) && path !== join(DOCS_DIR, 'index.md') && !listed.has(path));
    expect(unlisted).toEqual([]);
  });
});

describe('the built site’s link check', () => {
  it('names an href to a missing page and one to a missing id, and follows clean URLs', async () => {
    const site = await mkdtemp(join(tmpdir(), 'quorumlock-site-'));
    try {
      await mkdir(join(site, 'guide'));
      await writeFile(join(site, 'index.html'), '<a href="/guide/locks#options">ok</a> <a href="/guide/gone">x</a> <a href="./guide/locks.html#nope">y</a>');
      await writeFile(join(site, 'guide/locks.html'), '<h2 id="options">Options</h2><a href="../">home</a><a href="#options">here</a>');
      const { pages, links, broken } = await checkSite(site);
      expect({ pages, links }).toEqual({ pages: 2, links: 5 });
      expect(broken).toEqual(['/index.html: /guide/gone: no such page or file', '/index.html: ./guide/locks.html#nope: no id #nope on guide/locks.html']);
    } finally {
      await rm(site, { recursive: true, force: true });
    }
  });
});

describe.runIf(existsSync(SITE_DIR))('the built site’s links (npm run docs built it)', () => {
  it('every internal href and its anchor resolves', async () => {
    const { pages, broken } = await checkSite();
    expect(pages, 'the build holds no page: did npm run docs fail?').toBeGreaterThan(0);
    expect(broken).toEqual([]);
  });
});
