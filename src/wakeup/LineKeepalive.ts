import type { NodeBackend } from '../node/NodeBackend.js';
import { KEEPALIVE_MS, LEASE_MS, type LinePosition } from './LinePosition.js';

interface Waiter {
  readonly backends: readonly NodeBackend[];
  readonly keys: readonly string[];
  readonly value: string;
  readonly position: LinePosition;
}

const waiters = new Set<Waiter>();
/** Nodes whose last keepalive has not answered: no second one piles up behind it. */
const busy = new Set<NodeBackend>();
let timer: NodeJS.Timeout | undefined;

/**
 * Keeps the places of this process's waiters in the Redis wait lines: one
 * request per node and period for all of them. The timer runs only while
 * somebody waits, and never keeps the process alive.
 */
export function keepPlace(backends: readonly NodeBackend[], keys: readonly string[], value: string, position: LinePosition): () => void {
  const waiter: Waiter = { backends, keys, value, position };
  waiters.add(waiter);
  if (!timer) {
    timer = setInterval(tick, KEEPALIVE_MS);
    timer.unref();
  }
  return () => {
    waiters.delete(waiter);
    if (waiters.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

function tick(): void {
  const byNode = new Map<NodeBackend, { keys: readonly string[]; value: string; ticket: number }[]>();
  for (const { backends, keys, value, position } of waiters) {
    if (position.ticket === 0) continue;
    backends.forEach((backend, index) => {
      if (!backend.keepalive || !position.nodes.has(index)) return;
      let entries = byNode.get(backend);
      if (!entries) byNode.set(backend, (entries = []));
      entries.push({ keys, value, ticket: position.ticket });
    });
  }
  for (const [backend, entries] of byNode) {
    if (busy.has(backend)) continue;
    busy.add(backend);
    const done = (): void => {
      busy.delete(backend);
    };
    // Best effort: a lost keepalive costs a place only after the lease.
    backend.keepalive!(entries, LEASE_MS).then(done, done);
  }
}
