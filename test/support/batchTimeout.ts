import { expect } from 'vitest';
import type { ExtendEvent } from '../../src/diagnostics/channels.js';
import { ErrorCode } from '../../src/index.js';
import type { LocalNodeSet } from './harness.js';
import { recordChannel } from './recordChannel.js';

/**
 * With `count` holders of resources named with `prefix` renewed together on
 * three nodes: pauses two of them, so that no holder of the batch can win its
 * quorum, and checks that the first `count` renewals each failed with both
 * silent nodes timed out; then resumes them and waits for `count` renewals
 * that won (each holder retried within what it had left).
 */
export async function expectBatchTimeoutCountsAgainstAll(nodes: LocalNodeSet, prefix: string, count: number): Promise<void> {
  const recorded = recordChannel<ExtendEvent>('quorumlock:extend');
  const ours = () => recorded.events.filter((event) => event.resources.some((resource) => resource.includes(prefix)));
  try {
    await nodes.node(0).pause();
    await nodes.node(1).pause();
    await expect.poll(() => ours().length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
    for (const event of ours().slice(0, count)) {
      expect(event.granted).toBe(false);
      expect(event.errorCode).toBe(ErrorCode.QUORUM_UNREACHABLE);
      expect(event.nodes.map((n) => n.status).sort()).toEqual(['ok', 'timeout', 'timeout']);
    }
    await nodes.node(0).resume();
    await nodes.node(1).resume();
    await expect.poll(() => ours().filter((e) => e.granted).length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
  } finally {
    recorded.stop();
  }
}
