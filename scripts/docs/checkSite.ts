/** `npm run docs:check`: the links of the site `npm run docs` built (scripts/docs/siteLinks.ts). */
import { existsSync } from 'node:fs';
import { checkSite, SITE_DIR } from './siteLinks.js';

if (!existsSync(SITE_DIR)) {
  process.stderr.write(`docs:check: no site at ${SITE_DIR}: run npm run docs first\n`);
  process.exit(1);
}
const { pages, links, broken } = await checkSite();
for (const line of broken) process.stderr.write(`broken: ${line}\n`);
process.stdout.write(`docs:check: ${pages} pages, ${links} internal links, ${broken.length} broken\n`);
process.exit(broken.length === 0 && pages > 0 ? 0 : 1);
