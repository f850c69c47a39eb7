import calculateSlot from 'cluster-key-slot';
import { InvalidArgumentError } from '../shared/errors.js';
import { fencingKeyFor } from '../scripts/fencingKey.js';

/**
 * A Lua script on a Redis Cluster may only touch keys of one hash slot, so a
 * multi-resource lock must put its keys in one slot (with a {hash tag}).
 */
export function assertSameHashSlot(keys: readonly string[], argument: string): void {
  const first = keys[0];
  if (first === undefined || keys.length === 1) return;
  const slot = calculateSlot(first);
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    if (calculateSlot(key) !== slot) {
      throw new InvalidArgumentError(
        `${argument}[${i}]`,
        `"${key}" is in hash slot ${calculateSlot(key)} but "${first}" is in ${slot}; ` +
          'a multi-resource lock on a Redis Cluster needs one slot (use a hash tag such as "{order:42}:stock")',
      );
    }
  }
}

/** A resource whose counter key cannot share its slot (an empty `{}` tag, a stray `}`) cannot be fenced on a cluster. */
export function assertFencingKeysShareSlot(keys: readonly string[], argument: string): void {
  keys.forEach((key, i) => {
    if (calculateSlot(fencingKeyFor(key)) !== calculateSlot(key)) {
      throw new InvalidArgumentError(
        `${argument}[${i}]`,
        `"${key}" cannot be fenced on a Redis Cluster: its token counter would land in another hash slot ` +
          '(give it a non-empty {hash tag})',
      );
    }
  });
}
