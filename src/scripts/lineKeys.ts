/**
 * The keys that go with a resource: its fencing counter and its wait line.
 * On a Redis Cluster a script's keys must share a hash slot, so each keeps the
 * resource's slot: a resource with a {hash tag} keeps its tag, any other is
 * wrapped in one.
 */
export function companionKey(resource: string, suffix: string): string {
  const open = resource.indexOf('{');
  const close = open === -1 ? -1 : resource.indexOf('}', open + 1);
  const hasHashTag = open !== -1 && close > open + 1;
  return hasHashTag ? `${resource}:${suffix}` : `{${resource}}:${suffix}`;
}

/** The line's order (ZSET value → ticket) and its leases (value → server ms): what a primitive's scripts take to keep or wake its waiters. */
export function lineAndLeaseFor(resource: string): [line: string, lease: string] {
  return [companionKey(resource, 'line'), companionKey(resource, 'lease')];
}

/** lineAndLeaseFor's two keys, and the line's ticket counter. */
export function lineKeysFor(resource: string): [line: string, lease: string, ticket: string] {
  const [line, lease] = lineAndLeaseFor(resource);
  return [line, lease, companionKey(resource, 'ticket')];
}
