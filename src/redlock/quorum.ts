/**
 * Quorum counting, as pure functions. The quorum comes from configuration
 * (how many nodes there are), never from how many happened to answer.
 */

export type Verdict = 'granted' | 'denied' | 'pending';

/** floor(N / 2) + 1: a strict majority of the configured nodes. */
export function quorumFor(nodeCount: number): number {
  return Math.floor(nodeCount / 2) + 1;
}

/**
 * Decides as early as the votes allow, both ways: granted at `quorum` votes
 * for, denied as soon as more than N - quorum votes are against (so an even N
 * split 2–2 ends instead of waiting for votes that cannot change the outcome).
 */
export function verdict(nodeCount: number, quorum: number, votesFor: number, votesAgainst: number): Verdict {
  if (votesFor >= quorum) return 'granted';
  if (votesAgainst > nodeCount - quorum) return 'denied';
  return 'pending';
}

/**
 * Why a vote was lost: `unreachable` when failed or silent nodes alone make a
 * quorum impossible (an outage), otherwise `held` (another value won nodes).
 */
export function denialCause(nodeCount: number, quorum: number, failures: number): 'unreachable' | 'held' {
  return failures > nodeCount - quorum ? 'unreachable' : 'held';
}
