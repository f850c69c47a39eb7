/** @sesamecare-oss/redlock, the maintained fork of node-redlock, at its defaults and with a short retry delay. */
import { ExecutionError, Redlock } from '@sesamecare-oss/redlock';
import { redlockStyleContenders } from './redlockStyle.js';

const { defaults, best } = redlockStyleContenders(
  'sesame-redlock',
  (clients, settings) => new Redlock(clients, settings),
  (error) => error instanceof ExecutionError,
);
export { best as sesameRedlockBest, defaults as sesameRedlockDefaults };
