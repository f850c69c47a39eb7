/**
 * The checks of the semaphore and read-write lock scenarios: each holder's
 * window is from the moment its grant reached it to the moment it let go or
 * its validity ended, whichever came first (on the shared time base).
 */
export interface HoldWindow {
  readonly holder: string;
  readonly permits: number;
  /** A writer: it may overlap nobody. */
  readonly exclusive: boolean;
  readonly from: number;
  readonly to: number;
}

export interface MostHeld {
  readonly most: number;
  readonly at: number;
  readonly holders: readonly string[];
}

/** The most permits held at one instant (windows are half-open: one ending as another starts do not meet). */
export function mostHeld(windows: readonly HoldWindow[]): MostHeld {
  const events = windows
    .filter((w) => w.to > w.from)
    .flatMap((w) => [
      { at: w.from, delta: w.permits, window: w },
      { at: w.to, delta: -w.permits, window: w },
    ])
    // Ends before starts at the same instant.
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let held = 0;
  const open = new Set<HoldWindow>();
  let best: MostHeld = { most: 0, at: 0, holders: [] };
  for (const event of events) {
    held += event.delta;
    if (event.delta > 0) open.add(event.window);
    else open.delete(event.window);
    if (held > best.most) best = { most: held, at: event.at, holders: [...open].map((w) => w.holder) };
  }
  return best;
}

/** Pairs of windows that overlap where one of them is a writer's. */
export function exclusiveOverlaps(windows: readonly HoldWindow[]): [HoldWindow, HoldWindow][] {
  const found: [HoldWindow, HoldWindow][] = [];
  const sorted = windows.filter((w) => w.to > w.from).sort((a, b) => a.from - b.from);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i] as HoldWindow;
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j] as HoldWindow;
      if (b.from >= a.to) break;
      if (a.exclusive || b.exclusive) found.push([a, b]);
    }
  }
  return found;
}
