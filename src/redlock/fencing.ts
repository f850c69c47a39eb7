/**
 * Fencing-token arithmetic for a quorum, as pure functions. Each granting
 * node hands out its own token per resource; the lock takes the largest, and
 * it must stand on a quorum before the lock is returned, so that the next
 * holder's quorum (which overlaps this one) sees it.
 */

/** The largest token per resource over the nodes' token lists. */
export function largestTokens(perNode: readonly (readonly bigint[])[]): bigint[] {
  const largest: bigint[] = [];
  for (const tokens of perNode) {
    tokens.forEach((token, i) => {
      const current = largest[i];
      if (current === undefined || token > current) largest[i] = token;
    });
  }
  return largest;
}

/** True when at least `quorum` nodes already hold exactly `tokens`: no write-back needed. */
export function standsOnQuorum(perNode: readonly (readonly bigint[])[], tokens: readonly bigint[], quorum: number): boolean {
  let holders = 0;
  for (const nodeTokens of perNode) {
    if (nodeTokens.length === tokens.length && nodeTokens.every((token, i) => token === tokens[i])) holders++;
  }
  return holders >= quorum;
}
