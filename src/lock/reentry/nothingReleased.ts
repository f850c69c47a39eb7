import type { ReleaseResult, SettledRelease } from '../../shared/grant.js';

/**
 * What releasing a hold that owns no keys resolves to: a re-entry's hold, or
 * a lock re-entered by its value. No node was asked, so none released.
 * Frozen and shared: such releases are frequent and all alike.
 */
const NONE: SettledRelease = Object.freeze({ released: 0, nodes: 0, outcomes: Object.freeze([]) });

class NothingReleased implements ReleaseResult {
  readonly released = 0;
  readonly nodes = 0;
  readonly outcomes = NONE.outcomes;

  get settled(): Promise<SettledRelease> {
    return Promise.resolve(NONE);
  }
}

export const NOTHING_RELEASED: Promise<ReleaseResult> = Promise.resolve(Object.freeze(new NothingReleased()));
