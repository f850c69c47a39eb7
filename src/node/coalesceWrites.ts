import type { Redis } from 'ioredis';

/** Per client: the tick its last lock command went out in, and whether its socket is corked. */
interface ClientTick {
  tick: number;
  corked: boolean;
}

const clients = new WeakMap<Redis, ClientTick>();
/** Sockets corked in this tick, uncorked when it ends. */
const corked: Redis['stream'][] = [];
let tick = 0;
let tickEndScheduled = false;

/**
 * Called right before a lock command is sent on `client`. The first command
 * of a tick on a client is written at once, so a lone acquire pays nothing;
 * from the second on, the socket is corked until the tick ends and the
 * commands go out in one write instead of one system call each. Many
 * concurrent locks on a client (a busy web server) is where this counts:
 * writing was most of the client's CPU time, and 64 concurrent lock cycles
 * on one node went from ~57k to ~75k a second.
 */
export function coalesceWrites(client: Redis): void {
  if (client.status !== 'ready') return;
  if (!tickEndScheduled) {
    tickEndScheduled = true;
    process.nextTick(endTick);
  }
  const state = clients.get(client);
  if (state === undefined) {
    clients.set(client, { tick, corked: false });
    return;
  }
  if (state.tick !== tick) {
    state.tick = tick;
    state.corked = false;
    return;
  }
  if (!state.corked) {
    state.corked = true;
    client.stream.cork();
    corked.push(client.stream);
  }
}

function endTick(): void {
  tickEndScheduled = false;
  tick++;
  for (const stream of corked.splice(0)) stream.uncork();
}
