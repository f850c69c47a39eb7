import {
  acquireScript,
  extendManyScript,
  extendScript,
  fenceScript,
  inspectScript,
  keepaliveScript,
  leaveScript,
  type LuaScript,
  releaseScript,
  verifyScript,
} from '../scripts/index.js';
import { releasePlainScript } from '../scripts/release.js';
import { rwReadExtendEachScript, rwReadExtendScript, rwReadReleaseScript, rwReadScript, rwWriteReleaseScript, rwWriteScript } from '../scripts/readWrite.js';
import { semaphoreAcquireScript, semaphoreExtendEachScript, semaphoreExtendScript, semaphoreReleaseScript, semaphoreTakeScript } from '../scripts/semaphore.js';

/**
 * What a request to the in-memory node does, as its request log and fault
 * planner name it: the mutex's operations by what they do (a single-key
 * acquire is a SET NX), other scripts by their name, plain commands as
 * 'command', a script the node does not know as 'script'.
 */
export type SimulatedOperation =
  | 'acquire'
  | 'extend'
  | 'release'
  | 'keepalive'
  | 'leave'
  | 'verify'
  | 'inspect'
  | 'fence'
  | 'semaphoreAcquire'
  | 'semaphoreTake'
  | 'semaphoreExtend'
  | 'semaphoreRelease'
  | 'rwRead'
  | 'rwReadExtend'
  | 'rwReadRelease'
  | 'rwWrite'
  | 'rwWriteRelease'
  | 'script'
  | 'command';

interface ScriptOp {
  readonly op: SimulatedOperation;
  /** Whether ARGV[1] is the holder's value (not for batches, nor for keepalive's lease). */
  readonly valueFirst: boolean;
}

/** Every script quorumlock sends, with what its requests are called. */
const SCRIPTS: readonly [LuaScript, SimulatedOperation, boolean?][] = [
  [acquireScript, 'acquire'],
  [extendScript, 'extend'],
  [extendManyScript, 'extend', false],
  [releaseScript, 'release'],
  [releasePlainScript, 'release'],
  [keepaliveScript, 'keepalive', false],
  [leaveScript, 'leave'],
  [verifyScript, 'verify'],
  [inspectScript, 'inspect', false],
  [fenceScript, 'fence'],
  [semaphoreAcquireScript, 'semaphoreAcquire'],
  [semaphoreTakeScript, 'semaphoreTake'],
  [semaphoreExtendScript, 'semaphoreExtend'],
  [semaphoreExtendEachScript, 'semaphoreExtend', false],
  [semaphoreReleaseScript, 'semaphoreRelease'],
  [rwReadScript, 'rwRead'],
  [rwReadExtendScript, 'rwReadExtend'],
  [rwReadExtendEachScript, 'rwReadExtend', false],
  [rwReadReleaseScript, 'rwReadRelease'],
  [rwWriteScript, 'rwWrite'],
  [rwWriteReleaseScript, 'rwWriteRelease'],
];

/** The sources of every script quorumlock sends (for a node that has served them before: SCRIPT LOAD). */
export const PROJECT_SCRIPTS: readonly LuaScript[] = SCRIPTS.map(([script]) => script);

const BY_SHA = new Map<string, ScriptOp>(SCRIPTS.map(([script, op, valueFirst]) => [script.sha, { op, valueFirst: valueFirst ?? true }]));

/** The project's scripts by SHA1. */


export function scriptOp(sha: string): ScriptOp {
  return BY_SHA.get(sha) ?? { op: 'script', valueFirst: false };
}

/** The holders' values a request carries: ARGV[1] for most scripts, every lock's for a batch of the mutex's renewals. */
export function valuesOf(sha: string, args: readonly string[]): string[] {
  if (sha === extendManyScript.sha) {
    if (args[0] === 'same') {
      const width = Number(args[2]);
      const joined = args[3] ?? '';
      const values: string[] = [];
      for (let at = 0; width > 0 && at < joined.length; at += width) values.push(joined.slice(at, at + width));
      return values;
    }
    return args.filter((_, i) => i % 3 === 1);
  }
  const first = args[0];
  return scriptOp(sha).valueFirst && first !== undefined ? [first] : [];
}
