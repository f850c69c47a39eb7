/**
 * A read-write lock's keys on a node: the writer's key, the readers' sorted
 * set and a waiting writer's claim. The resource is the hash tag of each, so
 * a Redis Cluster keeps them in one slot.
 */
const WRITER_SUFFIX = '}:writer';

export function readWriteKeys(resource: string): [writer: string, readers: string, claim: string] {
  return [`{${resource}${WRITER_SUFFIX}`, `{${resource}}:readers`, `{${resource}}:claim`];
}

/** The resource whose keys these are. */
export function resourceOfKeys(keys: readonly string[]): string {
  return (keys[0] ?? '').slice(1, -WRITER_SUFFIX.length);
}
