import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SharedTimer, TASKS_PER_TURN, TimedTask } from '../../src/lock/SharedTimer.js';

describe('SharedTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const clock = { now: () => Date.now() };

  it('runs each task at its time, with the tasks that may go early alongside, on one Node timer', () => {
    const timer = new SharedTimer(clock);
    const ran: string[] = [];
    const task = (name: string) => new TimedTask(() => ran.push(`${name}@${Date.now() - 1_000_000}`));
    timer.scheduleIn(task('a'), 100);
    timer.scheduleIn(task('b'), 130, 40); // may go from 90 on: with a
    timer.scheduleIn(task('c'), 150, 10); // from 140: alone
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(200);
    expect(ran).toEqual(['a@100', 'b@100', 'c@150']);
    expect(vi.getTimerCount()).toBe(0);
    expect(timer.armed).toBe(false);
  });

  it('a cancelled task never runs, and the timer stops with the last task', () => {
    const timer = new SharedTimer(clock);
    const ran: number[] = [];
    const tasks = [0, 1, 2].map((i) => new TimedTask(() => ran.push(i)));
    tasks.forEach((t, i) => timer.scheduleIn(t, 10 * (i + 1)));
    timer.cancel(tasks[0] as TimedTask);
    timer.cancel(tasks[2] as TimedTask);
    vi.advanceTimersByTime(100);
    expect(ran).toEqual([1]);
    timer.scheduleIn(tasks[0] as TimedTask, 10);
    timer.cancel(tasks[0] as TimedTask);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs at most TASKS_PER_TURN due tasks per turn of the event loop, the rest in the turns after', () => {
    const timer = new SharedTimer(clock);
    let ran = 0;
    const count = 2 * TASKS_PER_TURN + TASKS_PER_TURN / 2;
    for (let i = 0; i < count; i++) timer.scheduleIn(new TimedTask(() => ran++), 100);
    vi.advanceTimersToNextTimer();
    expect(ran).toBe(TASKS_PER_TURN);
    vi.advanceTimersToNextTimer();
    expect(ran).toBe(2 * TASKS_PER_TURN);
    vi.advanceTimersToNextTimer();
    expect(ran).toBe(count);
    expect(timer.armed).toBe(false);
  });

  it('property: whatever is scheduled, moved and cancelled, each task runs once, never before it may, and not later than due', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('schedule' as const), task: fc.nat(9), delay: fc.oneof(fc.constant(0), fc.nat(500)), early: fc.oneof(fc.constant(0), fc.nat(100)) }),
      fc.record({ kind: fc.constant('cancel' as const), task: fc.nat(9) }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.constant(0), fc.constant(1), fc.nat(300)) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        vi.clearAllTimers();
        const timer = new SharedTimer(clock);
        const plans = new Map<number, { due: number; early: number }>();
        // The timer keeps a task's exception to itself: what a task finds wrong is noted here.
        const wrong: string[] = [];
        const tasks = Array.from({ length: 10 }, (_, i) =>
          new TimedTask(() => {
            const plan = plans.get(i);
            if (!plan) wrong.push(`task ${i} ran unscheduled`);
            else if (Date.now() < plan.due - plan.early) wrong.push(`task ${i} ran at ${Date.now()}, before ${plan.due - plan.early}`);
            plans.delete(i);
          }),
        );
        for (const step of ops) {
          if (step.kind === 'schedule') {
            timer.scheduleIn(tasks[step.task] as TimedTask, step.delay, step.early);
            plans.set(step.task, { due: Date.now() + step.delay, early: step.early });
          } else if (step.kind === 'cancel') {
            timer.cancel(tasks[step.task] as TimedTask);
            plans.delete(step.task);
          } else {
            vi.advanceTimersByTime(step.ms);
          }
          // Anything overdue has run (fake time is whole ms, so no rounding is left); a task due
          // right now runs when the timers next turn.
          for (const plan of plans.values()) expect(plan.due).toBeGreaterThanOrEqual(Date.now());
          expect(wrong).toEqual([]);
          expect(timer.size).toBe(plans.size);
          expect(vi.getTimerCount()).toBe(plans.size > 0 ? 1 : 0);
        }
        for (const t of tasks) timer.cancel(t);
        expect(vi.getTimerCount()).toBe(0);
      }),
    );
  });
});
