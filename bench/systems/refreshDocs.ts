/** `npm run docs:systems`: the choosing-a-lock guide's table, from docs/data/systems.json. */
import { refreshGuide } from './docs.js';

await refreshGuide();
