/**
 * The key of a resource's fencing-token counter. On a Redis Cluster a script's
 * keys must share a hash slot, so the counter keeps the resource's slot: a
 * resource with a {hash tag} keeps its tag, any other is wrapped in one.
 */
export function fencingKeyFor(resource: string): string {
  const open = resource.indexOf('{');
  const close = open === -1 ? -1 : resource.indexOf('}', open + 1);
  const hasHashTag = open !== -1 && close > open + 1;
  return hasHashTag ? `${resource}:fencing` : `{${resource}}:fencing`;
}
