// Use with `node --import tsx --import ./scripts/register-lua.mjs file.ts`.
import { register } from 'node:module';

register('./lua-hooks.mjs', import.meta.url);
