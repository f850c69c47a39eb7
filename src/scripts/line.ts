import { lineKeysFor } from './lineKeys.js';
import { LuaScript, type ScriptClient } from './LuaScript.js';
import lineSource from './line.lua';
import keepaliveSource from './keepalive.lua';
import leaveSource from './leave.lua';

/**
 * How long a handed-off key stays reserved for the line's head (release.lua
 * falls back to this same figure when not told): a reservation nobody takes,
 * because its waiter died or paused, frees the key after this.
 */
export const RESERVATION_MS = 600;

/** A script that keeps wait lines: line.lua's helpers go in front of its own source (and of any other helpers it needs, in order), defined before it runs. */
export function lineScript(name: string, ...sources: string[]): LuaScript {
  return new LuaScript(name, [lineSource, 'line_helpers()', ...sources].join('\n'));
}

/**
 * A script that reaches a wait line on some paths only: line.lua's helpers go
 * in front of its source, which calls line_helpers() on those paths, so the
 * others do not pay for defining them.
 */
export function lineScriptOnDemand(name: string, source: string): LuaScript {
  return new LuaScript(name, [lineSource, source].join('\n'));
}

export const keepaliveScript = lineScript('keepalive', keepaliveSource);
export const leaveScript = lineScript('leave', leaveSource);

/** A waiter's place in the lines of its resources on one node. */
export interface LineEntry {
  readonly keys: readonly string[];
  readonly value: string;
  readonly ticket: number;
}

/** Each resource's line and lease, after the resources (release and leave take them so). */
export function withLines(keys: readonly string[]): readonly string[] {
  let all = linesOf.get(keys);
  if (all) return all;
  const built = [...keys];
  for (const key of keys) {
    const [line, lease] = lineKeysFor(key);
    built.push(line, lease);
  }
  linesOf.set(keys, built);
  return built;
}

/**
 * A lock's keys array is the same object for every node and every release of
 * it: its line keys are built once, not once per node (on five nodes that was
 * a visible share of an uncontended release's client CPU).
 */
const linesOf = new WeakMap<readonly string[], readonly string[]>();

/** Refreshes every entry's lease (and raises its ticket); how many entries still had a place. */
export function keepalive(client: ScriptClient, entries: readonly LineEntry[], leaseMs: number): Promise<number> {
  const keys: string[] = [];
  const args: (string | number)[] = [leaseMs];
  for (const { keys: resources, value, ticket } of entries) {
    for (const resource of resources) {
      keys.push(...lineKeysFor(resource));
      args.push(value, ticket);
    }
  }
  return keepaliveScript.run(client, keys, args, Number);
}

/**
 * Steps out of the lines; a waiter that gave up (`acquired` false) also hands
 * on a reservation it was given and did not take.
 */
export function leave(client: ScriptClient, keys: readonly string[], value: string, acquired: boolean): Promise<number> {
  return leaveScript.run(client, withLines(keys), [value, acquired ? 'acquired' : 'gave-up', RESERVATION_MS], Number);
}

/** A waiter's place, as line.lua's stand_in_line (and acquire.lua) answers it, {-ticket, server µs}; undefined for any other reply. */
export function readPlace(reply: unknown): { ticket: number; serverUs: number } | undefined {
  if (!Array.isArray(reply) || reply.length !== 2) return undefined;
  const first = Number(reply[0]);
  return first < 0 ? { ticket: -first, serverUs: Number(reply[1]) } : undefined;
}
