/**
 * What a measurement reports, and how to read each number. Scenarios fill a
 * Sample; the report, the ratios and the chart read these definitions, so a
 * metric is described in one place only.
 */

export type MetricId =
  | 'cyclesPerSec'
  | 'p50Us'
  | 'mixedP50Us'
  | 'p99Us'
  | 'waitP50Ms'
  | 'waitP99Ms'
  | 'cmdsPerCycle'
  | 'cpuUsPerCycle'
  | 'cpuPct'
  | 'redisUsPerCycle'
  | 'loopTurnsPerCycle'
  | 'reqsPerCycle'
  | 'jain'
  | 'minMaxShare'
  | 'starvedPct'
  | 'giveUps'
  | 'errors'
  | 'overlaps'
  | 'holdCapPerSec'
  | 'fifoRatio'
  | 'reqsPerCycleNode'
  | 'cmdsPerCycleNode'
  | 'jainProcs'
  | 'jainWaiters'
  | 'passGapMs'
  | 'handoffGapMs'
  | 'handoffShare';

/** One contender's numbers from one round of one scenario. */
export type Sample = Partial<Record<MetricId, number>>;

export interface MetricInfo {
  /** Column heading in the terminal table. */
  readonly heading: string;
  /** Longer description for the README and the JSON. */
  readonly description: string;
  readonly better: 'lower' | 'higher' | 'zero';
  readonly digits: number;
}

export const METRICS: Readonly<Record<MetricId, MetricInfo>> = {
  cyclesPerSec: {
    heading: 'cycles/s',
    description: 'completed acquire+release cycles (critical sections when contended) per second',
    better: 'higher',
    digits: 0,
  },
  p50Us: { heading: 'p50 µs', description: 'median acquire+release cycle time, one client', better: 'lower', digits: 0 },
  mixedP50Us: {
    heading: 'mixed p50 µs',
    description:
      'median acquire+release cycle time when the contenders take turns of 16 cycles, in a new random order every pass, 200 passes: all of them meet the same moments of the machine, so the ratios between them are the steadiest of the run',
    better: 'lower',
    digits: 0,
  },
  p99Us: { heading: 'p99 µs', description: '99th percentile acquire+release cycle time, one client', better: 'lower', digits: 0 },
  waitP50Ms: {
    heading: 'wait p50 ms',
    description: 'median time from wanting the lock to holding it (retries after give-ups included)',
    better: 'lower',
    digits: 1,
  },
  waitP99Ms: { heading: 'wait p99 ms', description: '99th percentile of the same wait', better: 'lower', digits: 1 },
  cmdsPerCycle: {
    heading: 'cmds/cycle',
    description: 'commands Redis executed per cycle, summed over nodes (INFO commandstats deltas; commands run inside Lua scripts count)',
    better: 'lower',
    digits: 1,
  },
  cpuUsPerCycle: {
    heading: 'CPU µs/cycle',
    description:
      "the bench process's CPU time (user + system) per cycle: the library's own work, ioredis's and the socket system calls; the redis-servers are other processes",
    better: 'lower',
    digits: 1,
  },
  cpuPct: {
    heading: 'CPU %',
    description:
      "the bench process's CPU time over the wall time while that contender ran, in % of one core: below 100 the client waited (on Redis, a timer or the socket) rather than worked",
    better: 'higher',
    digits: 0,
  },
  redisUsPerCycle: {
    heading: 'Redis µs/cycle',
    description:
      "the redis-server processes' own CPU time per cycle, summed over nodes (INFO cpu used_cpu_user + used_cpu_sys deltas): the commands and the server's socket reads and writes",
    better: 'lower',
    digits: 1,
  },
  loopTurnsPerCycle: {
    heading: 'turns/cycle',
    description:
      "turns of the bench process's event loop per cycle (libuv's loop count): a lock that waits a tick, a timer or an immediate between its steps takes more of them",
    better: 'lower',
    digits: 3,
  },
  reqsPerCycle: {
    heading: 'reqs/cycle',
    description: 'requests the library sent per cycle, summed over nodes (counted on its ioredis clients): round trips',
    better: 'lower',
    digits: 1,
  },
  jain: {
    heading: 'Jain',
    description: "Jain's fairness index over the waiters' numbers of critical sections: 1 = equal shares, 1/n = one waiter got all",
    better: 'higher',
    digits: 2,
  },
  minMaxShare: {
    heading: 'min/max',
    description: 'fewest critical sections of any waiter over most of any waiter (0 = some waiter starved)',
    better: 'higher',
    digits: 2,
  },
  starvedPct: {
    heading: 'starved %',
    description: 'share of waiters that never held the lock during the window',
    better: 'lower',
    digits: 0,
  },
  giveUps: {
    heading: 'give-ups',
    description: 'acquire calls that gave up (their own retry limit or timeout) and were called again',
    better: 'zero',
    digits: 0,
  },
  errors: { heading: 'errors', description: 'acquire or release calls that failed otherwise', better: 'zero', digits: 0 },
  overlaps: {
    heading: 'overlaps',
    description: 'times two waiters held the lock at once (must be 0)',
    better: 'zero',
    digits: 0,
  },
  holdCapPerSec: {
    heading: 'hold cap',
    description:
      'critical sections per second no lock could beat in this run: 1000 / the mean measured hold in ms (the 1 ms timer and its overshoot); cycles/s over it is the share of time the lock was held',
    better: 'higher',
    digits: 0,
  },
  fifoRatio: {
    heading: 'p99 ×FIFO',
    description:
      'wait p99 over the FIFO ideal: all waiters × the mean measured hold, what a perfectly fair lock with free handoffs would make the last one in line wait',
    better: 'lower',
    digits: 2,
  },
  reqsPerCycleNode: {
    heading: 'reqs/cs/node',
    description: 'requests the library sent per critical section and node (counted on its ioredis clients in every process)',
    better: 'lower',
    digits: 1,
  },
  cmdsPerCycleNode: {
    heading: 'cmds/cs/node',
    description: 'commands Redis executed per critical section and node (INFO commandstats deltas; commands run inside Lua scripts count)',
    better: 'lower',
    digits: 1,
  },
  jainProcs: {
    heading: 'Jain procs',
    description:
      "Jain's fairness index over the processes' critical sections while every waiter still wanted the lock (until the first waiter had all of its own)",
    better: 'higher',
    digits: 2,
  },
  passGapMs: {
    heading: 'pass gap ms',
    description:
      'mean time from the end of one critical section to the start of the next when both ran in the same process (a lock passed between waiters of one process)',
    better: 'lower',
    digits: 3,
  },
  handoffGapMs: {
    heading: 'handoff gap ms',
    description: 'mean time from the end of one critical section to the start of the next when they ran in different processes (a handoff through Redis)',
    better: 'lower',
    digits: 3,
  },
  handoffShare: {
    heading: 'handoffs %',
    description: 'share of the moves from one critical section to the next that crossed to another process',
    better: 'lower',
    digits: 1,
  },
  jainWaiters: {
    heading: 'Jain waiters',
    description:
      "Jain's fairness index over the waiters' critical sections while every waiter still wanted the lock (until the first waiter had all of its own)",
    better: 'higher',
    digits: 2,
  },
};
