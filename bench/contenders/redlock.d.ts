/**
 * Types for `redlock` 5.0.0-beta.2: its package.json `exports` lacks a
 * `types` condition, so under NodeNext TypeScript cannot find the
 * dist/index.d.ts it ships. Only what the benchmark calls, copied from there.
 */
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';
  import type { Cluster, Redis } from 'ioredis';

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  export class ExecutionError extends Error {}
  export class ResourceLockedError extends Error {}

  export class Lock {
    readonly resources: string[];
    readonly value: string;
    expiration: number;
    release(): Promise<unknown>;
  }

  export default class Redlock extends EventEmitter {
    constructor(clients: Iterable<Redis | Cluster>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    /** Extends the lock `automaticExtensionThreshold` ms before it expires while `routine` runs (bench/held). */
    using<T>(resources: string[], duration: number, routine: (signal: RedlockAbortSignal) => Promise<T>): Promise<T>;
  }

  export interface RedlockAbortSignal extends AbortSignal {
    error?: Error;
  }
}
