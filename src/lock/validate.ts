import { describe } from '../shared/describe.js';
import { InvalidArgumentError } from '../shared/errors.js';

/** A resource name, or several to lock together (all or none). */
export type Resources = string | readonly string[];

/** The largest TTL a timer can count (about 24.8 days). */
export const MAX_TTL_MS = 2_147_483_647;

/** Returns the resources as a fresh array, or throws naming the bad entry. */
export function normalizeResources(resources: unknown, argument = 'resources'): readonly string[] {
  if (typeof resources === 'string') {
    assertResourceName(resources, argument);
    return [resources];
  }
  if (!Array.isArray(resources)) {
    throw new InvalidArgumentError(argument, `expected a string or a non-empty array of strings, got ${describe(resources)}`);
  }
  if (resources.length === 0) throw new InvalidArgumentError(argument, 'expected at least one resource, got an empty array');
  // A few keys (a semaphore permit is two) are searched faster than a Set is built.
  const seen = resources.length > 16 ? new Set<string>() : undefined;
  const keys: string[] = [];
  for (let i = 0; i < resources.length; i++) {
    const resource: unknown = resources[i];
    // The element's name is built only for an error: every multi-key acquire (each semaphore permit) passes here.
    if (typeof resource !== 'string') throw new InvalidArgumentError(`${argument}[${i}]`, `expected a string, got ${describe(resource)}`);
    if (resource.length === 0) throw emptyName(`${argument}[${i}]`);
    if (seen ? seen.has(resource) : keys.includes(resource)) throw new InvalidArgumentError(`${argument}[${i}]`, `"${resource}" appears twice`);
    seen?.add(resource);
    keys.push(resource);
  }
  return keys;
}

function assertResourceName(resource: string, argument: string): void {
  if (resource.length === 0) throw emptyName(argument);
}

function emptyName(argument: string): InvalidArgumentError {
  return new InvalidArgumentError(argument, 'expected a non-empty string');
}

/** A lock's value, as acquire() made it: a non-empty string. */
export function assertLockValue(value: unknown, argument = 'value'): asserts value is string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidArgumentError(argument, `expected the lock's value (a non-empty string), got ${describe(value)}`);
  }
}

/** A TTL is a whole number of milliseconds from 1 to MAX_TTL_MS. */
export function assertTtl(ttlMs: unknown, argument = 'ttlMs'): asserts ttlMs is number {
  assertInteger(ttlMs, argument, 1, MAX_TTL_MS);
}

export function assertInteger(value: unknown, argument: string, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(argument, `expected an integer from ${min} to ${max}, got ${describe(value)}`);
  }
}

export function assertNumber(value: unknown, argument: string, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max) {
    throw new InvalidArgumentError(argument, `expected a number from ${min} to ${max}, got ${describe(value)}`);
  }
}

export function assertFunction(value: unknown, argument: string): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') throw new InvalidArgumentError(argument, `expected a function, got ${describe(value)}`);
}

export function assertSignal(value: unknown, argument: string): asserts value is AbortSignal | undefined {
  if (value !== undefined && !(value instanceof AbortSignal)) {
    throw new InvalidArgumentError(argument, `expected an AbortSignal, got ${describe(value)}`);
  }
}

/** Rejects a non-object, and keys the options do not know (often a peer library's option name). */
export function assertOptionsObject(
  value: unknown,
  argument: string,
  known: readonly string[],
): asserts value is Record<string, unknown> | undefined {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(argument, `expected an object, got ${describe(value)}`);
  }
  // for...in, not Object.keys: this runs on every acquire, and needs no array.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`${argument}.${key}`, `unknown option (known: ${known.join(', ')})`);
    }
  }
}
