/**
 * The slot sets an acquire of `permits` out of `limit` tries, in order: the
 * windows of `permits` consecutive slots in a random permutation, `limit` of
 * them (one per start), so every slot is tried and racing acquirers seldom
 * pick the same first set. `random` returns [0, 1) like Math.random.
 */
export function candidateSlots(limit: number, permits: number, random: () => number): number[][] {
  const order = Array.from({ length: limit }, (_, slot) => slot);
  for (let i = limit - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const windows = permits === limit ? 1 : limit;
  return Array.from({ length: windows }, (_, start) => Array.from({ length: permits }, (_, k) => order[(start + k) % limit] as number));
}
