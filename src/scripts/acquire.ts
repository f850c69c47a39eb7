import { fencingKeyFor } from './fencingKey.js';
import { lineScript, readPlace } from './line.js';
import { lineKeysFor } from './lineKeys.js';
import { isOne, type ScriptClient } from './LuaScript.js';
import source from './acquire.lua';

export const acquireScript = lineScript('acquire', source);

/** The part of a client that runs SET. */
export interface SetClient {
  set(key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX'): Promise<unknown>;
}

/**
 * True when every key now holds `value`; false when any holds another value.
 * One key is taken with a plain SET NX PX: a third of the script's server
 * time, and the lock's commonest case. The one difference: a key that already
 * holds our own value (a retry after a lost reply whose undo also failed)
 * counts as held, so that node stays out of the vote until the key expires.
 */
export function acquire(client: ScriptClient & SetClient, keys: readonly string[], value: string, ttlMs: number): Promise<boolean> {
  if (keys.length === 1) return client.set(keys[0] as string, value, 'PX', ttlMs, 'NX').then(isOk);
  return acquireScript.run(client, keys, [value, ttlMs], isOne);
}

function isOk(reply: unknown): boolean {
  return reply === 'OK';
}

/**
 * Like acquire, and hands out each resource's next fencing token on this node;
 * null when any key holds another value.
 */
export function acquireFenced(client: ScriptClient, keys: readonly string[], value: string, ttlMs: number): Promise<bigint[] | null> {
  return acquireScript.run(client, [...keys, ...keys.map(fencingKeyFor)], [value, ttlMs, 'fence'], toTokens);
}

/**
 * What an attempt made from a wait line got on one node: granted, or a place
 * (its ticket, and the node's server time in µs when it answered, which a
 * later handoff's announcement is compared with; absent where unknown).
 */
export type LineReply =
  | { readonly granted: true; readonly tokens?: bigint[] }
  | { readonly granted: false; readonly ticket: number; readonly serverUs?: number };

/** Where a waiter stands: its ticket so far (0: none yet) and how long a place is held without news from it. */
export interface LinePlace {
  readonly ticket: number;
  readonly leaseMs: number;
}

/**
 * An attempt of a waiter: takes the keys only when they are free (or
 * reserved for it by a handoff) and it is first in every resource's line;
 * otherwise it keeps (or takes) its place and gets its ticket back.
 */
export function acquireInLine(
  client: ScriptClient,
  keys: readonly string[],
  value: string,
  ttlMs: number,
  fencing: boolean,
  place: LinePlace,
): Promise<LineReply> {
  const all = fencing ? [...keys, ...keys.map(fencingKeyFor)] : [...keys];
  for (const key of keys) all.push(...lineKeysFor(key));
  return acquireScript.run(client, all, [value, ttlMs, fencing ? 'fence' : '', 'line', place.leaseMs, place.ticket], toLineReply);
}

function toLineReply(reply: unknown): LineReply {
  const place = readPlace(reply);
  if (place) return { granted: false, ...place };
  // Tokens are positive.
  if (Array.isArray(reply)) return { granted: true, tokens: reply.map((token) => BigInt(token as number | string)) };
  const number = Number(reply);
  if (number === 1) return { granted: true };
  return { granted: false, ticket: -number };
}

function toTokens(reply: unknown): bigint[] | null {
  if (!Array.isArray(reply)) return null;
  return reply.map((token) => BigInt(token as number | string));
}
