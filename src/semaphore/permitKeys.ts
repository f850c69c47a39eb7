/**
 * A semaphore's keys on a node: its limit record and its permit slots, one
 * mutex key each. The resource is the hash tag of every one, so a Redis
 * Cluster keeps them in one slot and a script can take them together.
 */
const LIMIT_SUFFIX = '}:limit';

export function limitKey(resource: string): string {
  return `{${resource}${LIMIT_SUFFIX}`;
}

export function slotKey(resource: string, slot: number): string {
  return `{${resource}}:permit:${slot}`;
}

/** The limit record, then the slots: what a holder of these slots holds. */
export function permitKeys(resource: string, slots: readonly number[]): string[] {
  const keys = [limitKey(resource)];
  for (const slot of slots) keys.push(slotKey(resource, slot));
  return keys;
}

/** The resource whose limit record `key` is. */
export function resourceOf(key: string): string {
  return key.slice(1, -LIMIT_SUFFIX.length);
}
