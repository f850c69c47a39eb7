/** The held scenario's terminal table and headline. */
import { holdsPermits } from './holders.js';
import type { HeldSample } from './protocol.js';

const COLUMNS: readonly { heading: string; value: (s: HeldSample) => number; digits: number }[] = [
  { heading: 'req/node/s', value: (s) => s.reqsPerNodePerS, digits: 1 },
  { heading: 'cmd/node/s', value: (s) => s.cmdsPerNodePerS, digits: 0 },
  { heading: 'renewals/lock/s', value: (s) => s.renewalsPerLockPerS, digits: 3 },
  { heading: 'req per 100 renewals', value: (s) => s.reqsPer100Renewals, digits: 2 },
  { heading: 'CPU µs/lock/s', value: (s) => s.cpuUsPerLockPerS, digits: 2 },
  { heading: 'CPU %', value: (s) => s.cpuPercent, digits: 1 },
  { heading: 'loop p99 ms', value: (s) => s.loopDelayP99Ms, digits: 1 },
  { heading: 'heap MB', value: (s) => s.heapEndMb, digits: 1 },
  { heading: 'heap growth MB', value: (s) => s.heapEndMb - s.heapStartMb, digits: 2 },
  { heading: 'GC/s', value: (s) => s.gcPausesPerS, digits: 1 },
  { heading: 'GC ms/s', value: (s) => s.gcPauseMsPerS, digits: 2 },
  { heading: 'lost', value: (s) => s.lost, digits: 0 },
  { heading: 'release errors', value: (s) => s.releaseErrors, digits: 0 },
];

export function renderHeldTable(samples: readonly HeldSample[]): string {
  const header = ['nodes', 'locks', 'library', ...COLUMNS.map((c) => c.heading)];
  const rows = samples.map((s) => [
    String(s.nodes),
    String(s.count),
    s.library,
    ...COLUMNS.map((c) => {
      const v = c.value(s);
      return Number.isFinite(v) ? v.toFixed(c.digits) : '–';
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  return ['held: locks kept under using() / auto-refresh, steady state', line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * At the largest lock count on the largest node count: quorumlock's requests
 * per 100 renewals, and how many times fewer requests and less CPU it needs
 * than the best peer (the peer with the fewest), and its event-loop p99; for
 * its locks, and for its semaphore permits when those were held too.
 */
export function heldHeadline(samples: readonly HeldSample[]): string[] {
  const semaphores = samples.filter((s) => holdsPermits(s.library));
  const locks = samples.filter((s) => !holdsPermits(s.library));
  return [...headlineOf(locks, 'quorumlock'), ...headlineOf(semaphores, 'quorumlock-semaphore')];
}

/** The headline of one kind of holder (locks, or semaphore permits): `oursName` against the peers of that kind. */
function headlineOf(samples: readonly HeldSample[], oursName: string): string[] {
  if (samples.length === 0) return [];
  const nodes = Math.max(...samples.map((s) => s.nodes));
  const count = Math.max(...samples.map((s) => s.count));
  const at = samples.filter((s) => s.nodes === nodes && s.count === count);
  const ours = at.find((s) => s.library === oursName);
  const peers = at.filter((s) => !s.library.startsWith('quorumlock'));
  const candidate = at.find((s) => s.library === `${oursName}-candidate`);
  if (!ours || (peers.length === 0 && candidate === undefined)) return [];
  const lines = [`headline, ${count} ${oursName === 'quorumlock' ? 'locks' : 'semaphore permits'} on ${nodes} node(s):`];
  if (peers.length > 0) {
    const fewest = (value: (s: HeldSample) => number) => peers.reduce((best, s) => (value(s) < value(best) ? s : best));
    const reqPeer = fewest((s) => s.reqsPerNodePerS);
    const cpuPeer = fewest((s) => s.cpuUsPerLockPerS);
    lines.push(
      `  ${oursName} requests per node per 100 renewals: ${ours.reqsPer100Renewals.toFixed(2)} (at most 1 wanted)`,
      `  requests/s: ${(reqPeer.reqsPerNodePerS / ours.reqsPerNodePerS).toFixed(1)}× fewer than the best peer (${reqPeer.library}, ${reqPeer.reqsPerNodePerS.toFixed(1)} vs ${ours.reqsPerNodePerS.toFixed(1)} per node)`,
      `  client CPU: ${(cpuPeer.cpuUsPerLockPerS / ours.cpuUsPerLockPerS).toFixed(1)}× less than the best peer (${cpuPeer.library}, ${cpuPeer.cpuUsPerLockPerS.toFixed(2)} vs ${ours.cpuUsPerLockPerS.toFixed(2)} µs per lock per s)`,
      `  event-loop delay p99: ${ours.loopDelayP99Ms.toFixed(1)} ms (peers: ${peers.map((p) => `${p.library} ${p.loopDelayP99Ms.toFixed(1)}`).join(', ')})`,
    );
  }
  if (candidate !== undefined) {
    lines.push(
      `  against the candidate build: CPU ${(candidate.cpuUsPerLockPerS / ours.cpuUsPerLockPerS).toFixed(2)}× (${candidate.cpuUsPerLockPerS.toFixed(2)} vs ${ours.cpuUsPerLockPerS.toFixed(2)} µs per lock per s), renewals/lock/s ${candidate.renewalsPerLockPerS.toFixed(3)} vs ${ours.renewalsPerLockPerS.toFixed(3)}, loop p99 ${candidate.loopDelayP99Ms.toFixed(1)} vs ${ours.loopDelayP99Ms.toFixed(1)} ms`,
    );
  }
  return lines;
}
