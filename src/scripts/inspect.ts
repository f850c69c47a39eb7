import { lineKeysFor } from './lineKeys.js';
import { LuaScript, type ScriptClient } from './LuaScript.js';
import { holderValue, isMarked } from './waiterMark.js';
import source from './inspect.lua';

export const inspectScript = new LuaScript('inspect', source);

/** One resource as one node stores it, read without changing it. */
export interface KeyState {
  /** The resource, as inspect() was asked. */
  readonly resource: string;
  /** The holder's lock value (without a waiter's mark), or null when the key is absent. */
  readonly value: string | null;
  /** A waiter marked the key: its release will be announced. */
  readonly waiterMarked: boolean;
  /** PTTL: ms left, -2 when the key is absent, -1 when it has no expiry. */
  readonly pttlMs: number;
  /** Waiters standing in the resource's wait line whose lease has not passed. */
  readonly waiters: number;
}

/** The state of `resource` on this node (see inspect.lua). */
export function inspectKey(client: ScriptClient, resource: string): Promise<KeyState> {
  const [line, lease] = lineKeysFor(resource);
  return inspectScript.run(client, [resource, line, lease], [], (reply) => toKeyState(resource, reply));
}

function toKeyState(resource: string, reply: unknown): KeyState {
  const [stored, pttl, live] = reply as [string | null, number, number, number];
  return {
    resource,
    value: stored === null ? null : holderValue(stored),
    waiterMarked: stored !== null && isMarked(stored),
    pttlMs: Number(pttl),
    waiters: Number(live),
  };
}
