import type { Clock } from '../clock/Clock.js';

/**
 * Something to run at a time on a SharedTimer. The caller keeps one per job
 * (a lock's expiry, a holder's renewal) and moves it: rescheduling allocates
 * nothing but, for a time no other task is due at, that time's slot.
 */
export class TimedTask {
  /** @internal When it is due, on the timer's clock. */
  dueAt = 0;
  /** @internal How much earlier it may run, to go out with tasks due before it. */
  earlyMs = 0;
  /** @internal The slot it waits in; undefined when not scheduled. */
  slot: TimerSlot | undefined = undefined;
  /** @internal Its place in the slot's tasks. */
  slotIndex = -1;

  constructor(readonly run: () => void) {}

  get scheduled(): boolean {
    return this.slot !== undefined;
  }
}

/**
 * The tasks due in one millisecond: the renewals of one batch get the same
 * validity and fall due together, and wait here as one entry of the heap.
 */
class TimerSlot {
  /** The end of its millisecond: none of its tasks is due later. */
  readonly dueAt: number;
  /** The least of its tasks' earlyMs (a task taken out leaves it as it was: it may only run later for that). */
  earlyMs = Infinity;
  readonly tasks: TimedTask[] = [];
  /** Its place in the heap; -1 when not in it. */
  index = -1;

  constructor(dueAt: number) {
    this.dueAt = dueAt;
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
 * something at a time can: see startAutoExtension). Tasks wait in slots of
 * one millisecond each (a task due at 10.2 ms waits in the slot of 11 ms, as
 * a Node timer for it would have fired at 11 ms at the earliest), the slots
 * in a binary heap by time; the timer is armed for the earliest only, and
 * never keeps the process alive. When it fires it runs every task due by
 * then, and with them every task that may run early and is due within its
 * `earlyMs`: the renewals of many locks go out in the same tick, and are
 * sent together.
 *
 * Ten thousand locks, each with a timer of its own that it cleared and set
 * again at every extend, were ten thousand timer objects in the timers
 * module's lists; then ten thousand entries of one heap, each renewal taken
 * off its top and put back (~13% of the busy samples in a profile of
 * 10,000 locks); here a batch's renewals are one entry, and a task goes in
 * and out of its slot in constant time.
 */
export class SharedTimer {
  readonly #clock: Clock;
  readonly #heap: TimerSlot[] = [];
  readonly #slots = new Map<number, TimerSlot>();
  #size = 0;
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer is due. */
  #armedFor = Infinity;
  #firing = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Tasks waiting. */
  get size(): number {
    return this.#size;
  }

  /** Whether a Node timer is armed (false once no task waits). */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Runs `task` at `dueAt` (on the clock), or up to `earlyMs` before with others; moves it if already scheduled. */
  schedule(task: TimedTask, dueAt: number, earlyMs = 0): void {
    const time = Math.ceil(dueAt);
    task.dueAt = dueAt;
    task.earlyMs = earlyMs;
    let slot = task.slot;
    if (slot?.dueAt !== time) {
      if (slot !== undefined) this.#takeOut(task);
      slot = this.#slots.get(time);
      const fresh = slot === undefined;
      if (slot === undefined) {
        slot = new TimerSlot(time);
        this.#slots.set(time, slot);
        slot.index = this.#heap.length;
        this.#heap.push(slot);
        this.#up(slot.index);
      }
      task.slot = slot;
      task.slotIndex = slot.tasks.length;
      slot.tasks.push(task);
      this.#size++;
      // A task put in a slot that was there already changes nothing the timer is armed for.
      if (fresh && !this.#firing) this.#arm();
    }
    if (earlyMs < slot.earlyMs) slot.earlyMs = earlyMs;
  }

  /** schedule() `delayMs` from now. */
  scheduleIn(task: TimedTask, delayMs: number, earlyMs = 0): void {
    this.schedule(task, this.#clock.now() + delayMs, earlyMs);
  }

  /** Takes `task` off the timer; nothing if it was not scheduled. */
  cancel(task: TimedTask): void {
    if (task.slot === undefined) return;
    this.#takeOut(task);
    if (!this.#firing && this.#heap.length === 0) this.#disarm();
  }

  #takeOut(task: TimedTask): void {
    const slot = task.slot as TimerSlot;
    const tasks = slot.tasks;
    const last = tasks.pop() as TimedTask;
    if (last !== task) {
      tasks[task.slotIndex] = last;
      last.slotIndex = task.slotIndex;
    }
    task.slot = undefined;
    task.slotIndex = -1;
    this.#size--;
    if (tasks.length === 0) this.#removeSlot(slot);
  }

  #removeSlot(slot: TimerSlot): void {
    this.#slots.delete(slot.dueAt);
    const heap = this.#heap;
    const index = slot.index;
    const last = heap.pop() as TimerSlot;
    slot.index = -1;
    if (last !== slot) {
      heap[index] = last;
      last.index = index;
      this.#down(index);
      this.#up(last.index);
    }
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.now();
    const due: TimedTask[] = [];
    const heap = this.#heap;
    // Taken out first, run after: a task may schedule itself again.
    while (heap.length > 0 && due.length < TASKS_PER_TURN) {
      const top = heap[0] as TimerSlot;
      if (top.dueAt - top.earlyMs > now) break;
      // The slot's last tasks first: taking them out moves no other task (#takeOut).
      const tasks = top.tasks;
      for (let take = Math.min(tasks.length, TASKS_PER_TURN - due.length); take > 0; take--) {
        const task = tasks[tasks.length - 1] as TimedTask;
        this.#takeOut(task);
        due.push(task);
      }
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
    const slot = heap[index] as TimerSlot;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as TimerSlot;
      if (parent.dueAt <= slot.dueAt) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = slot;
    slot.index = index;
  }

  #down(index: number): void {
    const heap = this.#heap;
    const length = heap.length;
    const slot = heap[index] as TimerSlot;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && (heap[right] as TimerSlot).dueAt < (heap[left] as TimerSlot).dueAt ? right : left;
      const smaller = heap[child] as TimerSlot;
      if (smaller.dueAt >= slot.dueAt) break;
      heap[index] = smaller;
      smaller.index = index;
      index = child;
    }
    heap[index] = slot;
    slot.index = index;
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
