/**
 * The Redis nodes a run uses: the URLs the user gave, or local redis-server
 * processes started (and stopped) through the test harness.
 */
import { startNodes } from '../test/support/harness.js';

export interface NodePool {
  readonly urls: readonly string[];
  /** True when this run started the nodes (so they are empty and ours alone). */
  readonly local: boolean;
  close(): Promise<void>;
}

export async function openNodes(urls: readonly string[], localCount: number): Promise<NodePool> {
  if (urls.length > 0) return { urls, local: false, close: async () => undefined };
  const set = await startNodes(localCount);
  return { urls: set.urls, local: true, close: () => set.stopAll() };
}
