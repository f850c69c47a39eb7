/** node-redlock 5.0.0-beta.2 (`redlock` on npm), at its defaults and with a short retry delay. */
import Redlock, { ExecutionError } from 'redlock';
import { redlockStyleContenders } from './redlockStyle.js';

const { defaults, best } = redlockStyleContenders(
  'node-redlock',
  (clients, settings) => new Redlock(clients, settings),
  (error) => error instanceof ExecutionError,
);
export { best as nodeRedlockBest, defaults as nodeRedlockDefaults };
