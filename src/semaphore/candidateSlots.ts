/**
 * The slot sets an acquire of `permits` out of `limit` tries, in order: the
 * windows of `permits` consecutive slots in a random permutation, `limit` of
 * them (one per start), so every slot is tried and racing acquirers seldom
 * pick the same first set. `random` returns [0, 1) like Math.random.
 */
export function candidateSlots(limit: number, permits: number, random: () => number): number[][] {
  // Plain loops: this runs on every semaphore acquire, and Array.from with a
  // callback per element was a visible share of an uncontended one.
  const order: number[] = [];
  for (let slot = 0; slot < limit; slot++) order.push(slot);
  for (let i = limit - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swapped = order[i] as number;
    order[i] = order[j] as number;
    order[j] = swapped;
  }
  const windows = permits === limit ? 1 : limit;
  const sets: number[][] = [];
  for (let start = 0; start < windows; start++) {
    const set: number[] = [];
    for (let k = 0; k < permits; k++) set.push(order[(start + k) % limit] as number);
    sets.push(set);
  }
  return sets;
}
