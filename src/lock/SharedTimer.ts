import type { Clock } from '../clock/Clock.js';

/**
 * Something to run at a time on a SharedTimer. The caller keeps one per job
 * (a lock's expiry, a holder's renewal) and moves it: rescheduling allocates
 * nothing.
 */
export class TimedTask {
  /** @internal When it is due, on the timer's clock. */
  dueAt = 0;
  /** @internal How much earlier it may run, to go out with tasks due before it. */
  earlyMs = 0;
  /** @internal Its place in the heap; -1 when not scheduled. */
  index = -1;

  constructor(readonly run: () => void) {}

  get scheduled(): boolean {
    return this.index >= 0;
  }
}

/**
 * Tasks run per turn of the event loop at most; the rest run in the next
 * turns, with I/O in between. Ten thousand renewals due together took
 * ~125 ms of one synchronous run (the event loop's p99 delay with them).
 * A renewal costs the process ~10-20 µs on a loaded machine, half of it
 * when it is sent and half when its replies are counted in a later turn:
 * 500 a turn made turns of ~10 ms on each side, and the 10,000-lock p99
 * 20-60 ms; 200 (two script calls per node) keep each side to a few ms.
 */
export const TASKS_PER_TURN = 200;

/** A timer that fires later than this after it was due was lost (armed under fake timers, since removed): arm it again. */
const LOST_AFTER_MS = 1000;

/**
 * One timer for every held lock of a process: expiries, renewals, and
 * whatever else a holder registers (any primitive whose holders need to run
 * something at a time can: see startAutoExtension). Tasks wait in a binary
 * heap by due time; the timer is armed for the earliest only, and never keeps
 * the process alive. When it fires it runs every task due by then, and with
 * them every task that may run early and is due within its `earlyMs`: the
 * renewals of many locks go out in the same tick, and are sent together.
 *
 * Ten thousand locks, each with a timer of its own that it cleared and set
 * again at every extend, were ten thousand timer objects in the timers
 * module's lists; here they are ten thousand array slots.
 */
export class SharedTimer {
  readonly #clock: Clock;
  readonly #heap: TimedTask[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due. */
  #armedFor = Infinity;
  #firing = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Tasks waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** Whether a Node timer is armed (false once no task waits). */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Runs `task` at `dueAt` (on the clock), or up to `earlyMs` before with others; moves it if already scheduled. */
  schedule(task: TimedTask, dueAt: number, earlyMs = 0): void {
    task.earlyMs = earlyMs;
    if (task.index >= 0) {
      const before = task.dueAt;
      task.dueAt = dueAt;
      if (dueAt < before) this.#up(task.index);
      else this.#down(task.index);
    } else {
      task.dueAt = dueAt;
      task.index = this.#heap.length;
      this.#heap.push(task);
      this.#up(task.index);
    }
    if (!this.#firing) this.#arm();
  }

  /** schedule() `delayMs` from now. */
  scheduleIn(task: TimedTask, delayMs: number, earlyMs = 0): void {
    this.schedule(task, this.#clock.now() + delayMs, earlyMs);
  }

  /** Takes `task` off the timer; nothing if it was not scheduled. */
  cancel(task: TimedTask): void {
    const index = task.index;
    if (index < 0) return;
    const heap = this.#heap;
    const last = heap.pop() as TimedTask;
    task.index = -1;
    if (last !== task) {
      heap[index] = last;
      last.index = index;
      this.#down(index);
      this.#up(last.index);
    }
    if (!this.#firing && heap.length === 0) this.#disarm();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.now();
    const due: TimedTask[] = [];
    const heap = this.#heap;
    // Taken out first, run after: a task may schedule itself again.
    while (heap.length > 0 && due.length < TASKS_PER_TURN) {
      const top = heap[0] as TimedTask;
      if (top.dueAt - top.earlyMs > now) break;
      this.cancel(top);
      due.push(top);
    }
    this.#firing = true;
    try {
      for (const task of due) {
        try {
          task.run();
        } catch {
          // A task's own failure is its own: the others still run.
        }
      }
    } finally {
      this.#firing = false;
      this.#arm(due.length === TASKS_PER_TURN);
    }
  }

  /** `more`: a turn left due tasks behind; the timer fires again in the next turn. */
  #arm(more = false): void {
    const top = this.#heap[0];
    if (top === undefined) {
      this.#disarm();
      return;
    }
    const now = this.#clock.now();
    const lost = this.#timer !== undefined && now > this.#armedFor + LOST_AFTER_MS;
    if (this.#timer !== undefined && this.#armedFor <= top.dueAt && !lost) return;
    this.#disarm();
    this.#armedFor = more ? now : top.dueAt;
    this.#timer = setTimeout(() => this.#fire(), more ? 0 : Math.max(0, Math.ceil(top.dueAt - now)));
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  #up(index: number): void {
    const heap = this.#heap;
    const task = heap[index] as TimedTask;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as TimedTask;
      if (parent.dueAt <= task.dueAt) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = task;
    task.index = index;
  }

  #down(index: number): void {
    const heap = this.#heap;
    const length = heap.length;
    const task = heap[index] as TimedTask;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && (heap[right] as TimedTask).dueAt < (heap[left] as TimedTask).dueAt ? right : left;
      const smaller = heap[child] as TimedTask;
      if (smaller.dueAt >= task.dueAt) break;
      heap[index] = smaller;
      smaller.index = index;
      index = child;
    }
    heap[index] = task;
    task.index = index;
  }
}

const timers = new WeakMap<Clock, SharedTimer>();

/** The process's one timer for locks counted on `clock` (every locker on the default clock shares it). */
export function sharedTimerFor(clock: Clock): SharedTimer {
  let timer = timers.get(clock);
  if (!timer) {
    timer = new SharedTimer(clock);
    timers.set(clock, timer);
  }
  return timer;
}
