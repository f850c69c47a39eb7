/**
 * The built site's internal links: every `<a href>` of every page of
 * docs/.vitepress/dist resolves to a page or file of the build, and its
 * #anchor to an id on that page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SITE_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../docs/.vitepress/dist');

export interface SiteCheck {
  readonly pages: number;
  readonly links: number;
  readonly broken: readonly string[];
}

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return htmlFiles(path);
    return entry.name.endsWith('.html') ? [path] : [];
  });
}

/** The file the site serves for `path` (clean URLs: /guide/x is guide/x.html, /guide/ is guide/index.html). */
function fileFor(site: string, path: string): string | undefined {
  const full = join(site, decodeURIComponent(path));
  const candidates = path.endsWith('/') ? [join(full, 'index.html')] : [full, `${full}.html`, join(full, 'index.html')];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

function idsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1] ?? ''));
}

export async function checkSite(site: string = SITE_DIR): Promise<SiteCheck> {
  const files = htmlFiles(site);
  const ids = new Map<string, Set<string>>();
  const idsFor = (file: string): Set<string> => {
    let found = ids.get(file);
    if (found === undefined) {
      found = idsOf(readFileSync(file, 'utf8'));
      ids.set(file, found);
    }
    return found;
  };
  const broken: string[] = [];
  let links = 0;
  for (const file of files) {
    const html = readFileSync(file, 'utf8');
    const page = `/${relative(site, file)}`;
    for (const match of html.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
      const href = (match[1] ?? '').replace(/&amp;/g, '&');
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue;
      links++;
      const [path = '', anchor = ''] = href.split('#');
      const target = path === '' ? file : fileFor(site, path.startsWith('/') ? path : resolve(dirname(page), path));
      if (target === undefined) {
        broken.push(`${page}: ${href}: no such page or file`);
      } else if (anchor !== '' && target.endsWith('.html') && !idsFor(target).has(decodeURIComponent(anchor))) {
        broken.push(`${page}: ${href}: no id #${anchor} on ${relative(site, target)}`);
      }
    }
  }
  return { pages: files.length, links, broken };
}
