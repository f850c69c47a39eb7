export { type Clock, monotonicClock } from './Clock.js';
export { type DriftSettings, driftFor, validityMs, validUntil } from './validity.js';
