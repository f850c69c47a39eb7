import { createLogger } from 'vite';
import { defineConfig, type DefaultTheme } from 'vitepress';
import { hasApiReference, pageExists, pageGroups, pageTitle } from './pages.js';

const sidebar: DefaultTheme.SidebarItem[] = [
  ...pageGroups().map((group) => ({
    text: group.text,
    items: group.pages.map((page) => ({ text: pageTitle(page), link: `/${page}` })),
  })),
  ...(hasApiReference() ? [{ text: 'Reference', items: [{ text: 'API', link: '/api/' }] }] : []),
];

// `npm run docs` builds with 0 warnings: any warning of VitePress, Vite or Shiki
// (an unknown code language, say) fails the build once it has finished.
const logger = createLogger(undefined, { prefix: '[vitepress]' });
const warn = logger.warn.bind(logger);
logger.warn = (message, options) => {
  warn(message, options);
  process.exitCode = 1;
};
logger.warnOnce = logger.warn;

export default defineConfig({
  // The local search index of the guides and the API reference is one chunk of ~1 MB, loaded only when the search opens.
  vite: { customLogger: logger, build: { chunkSizeWarningLimit: 2000 } },
  title: 'quorumlock',
  description: 'Redis distributed locks for Node.js: RedisLock, Redlock, semaphore, read-write lock, fencing and failover.',
  cleanUrls: true,
  lastUpdated: false,
  // A broken link fails the build (VitePress's default); the link test checks anchors too.
  ignoreDeadLinks: false,
  themeConfig: {
    nav: [
      ...(pageExists('guide/getting-started') ? [{ text: 'Guide', link: '/guide/getting-started' }] : []),
      ...(hasApiReference() ? [{ text: 'API', link: '/api/' }] : []),
      { text: 'Benchmarks', link: '/guide/benchmarks' },
    ],
    sidebar,
    search: { provider: 'local' },
    outline: { level: [2, 3] },
  },
});
