/** Every scenario of a run, in the order they are run and reported. */
import { contended } from './contended.js';
import { parallel } from './parallel.js';
import type { Scenario } from './types.js';
import { uncontended } from './uncontended.js';

export const SCENARIOS: readonly Scenario[] = [uncontended, parallel, contended(16), contended(200), contended(200, 'burst')];

export type { Budget, Measurement, Scenario, ScenarioContext } from './types.js';
