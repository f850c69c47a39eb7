/** What bench/held/run.ts tells a child, and what the child prints back. */

export interface HeldConfig {
  readonly library: string;
  readonly libraryUrl: string;
  readonly urls: readonly string[];
  readonly count: number;
  readonly ttlMs: number;
  /** After the last lock is held, before measuring: one TTL, so that every lock was renewed once. */
  readonly settleMs: number;
  /** The window of requests, commands, CPU, GC and heap. */
  readonly durationMs: number;
  /** The window of the event loop's delay and the heap's growth, right after (its sampling timer and forced GCs would weigh on the CPU window's figure). */
  readonly delayWindowMs: number;
  readonly keyPrefix: string;
  /** With `--profile DIR`: a V8 CPU profile of the measured window alone (not the acquires) goes there. */
  readonly profileDir?: string;
}

export interface HeldSample {
  readonly library: string;
  readonly nodes: number;
  readonly count: number;
  readonly seconds: number;
  /** Requests the library sent, per node per second (client side: every command its clients sent). */
  readonly reqsPerNodePerS: number;
  /** Commands each node ran per second, those inside scripts included (INFO commandstats). */
  readonly cmdsPerNodePerS: number;
  /** How often each lock was renewed per second, seen on the nodes (PEXPIRE or SET PX of its key). */
  readonly renewalsPerLockPerS: number;
  /** Requests per node for every 100 lock renewals on it: 100 when each renewal is a request of its own. */
  readonly reqsPer100Renewals: number;
  /** The process's CPU time (user + system) per held lock per second, in µs. */
  readonly cpuUsPerLockPerS: number;
  readonly cpuPercent: number;
  /** The kernel's share of that CPU (socket reads and writes, mostly). */
  readonly cpuSystemShare: number;
  /** The main thread's share of that CPU (Linux only, else NaN); the rest is V8's helper threads, garbage collection mostly. */
  readonly cpuMainThreadShare: number;
  /** Over the window after the CPU window (HeldConfig.delayWindowMs). */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /** Heap used after GC: before any lock was taken, and at the start and end of the delay window (after the CPU window, which no forced GC may precede). */
  readonly heapBeforeMb: number;
  readonly heapStartMb: number;
  readonly heapEndMb: number;
  /** Locks the library said were lost while held (none should be: no fault is injected). */
  readonly lost: number;
  /** Releases that failed (node-redlock fails the release of a lock that expired). */
  readonly releaseErrors: number;
  /** Garbage collections per second in the window, and the main thread's time in them (ms per s). */
  readonly gcPausesPerS: number;
  readonly gcPauseMsPerS: number;
}
