// Redlock: one lock over five independent Redis servers. A lock needs a
// majority (3 of 5) and validity left; with two nodes down it still works,
// with three it fails as an outage, not as contention.
//
// It needs five servers on localhost:6379..6383, e.g.
//   for p in 6379 6380 6381 6382 6383; do redis-server --port $p --save '' --daemonize yes; done
// In a project that depends on quorumlock and ioredis:
//
//   npx tsx redlock.ts
//
// (In this repository: `npm run build && npx tsx examples/redlock.ts`.)
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { ErrorCode, isQuorumLockError, Redlock } from 'quorumlock';

const ports = [6379, 6380, 6381, 6382, 6383];
const clients = ports.map((port) => new Redis(port));
const redlock = new Redlock(clients, { fencing: true });

// A lock on all five nodes, with a fencing token.
const lock = await redlock.acquire('ledger', 10_000);
assert.ok(lock.fencingToken !== undefined);
const inspection = await redlock.inspect('ledger');
assert.equal(inspection.resources[0]?.state, 'held');
assert.equal(inspection.quorum, 3);
const first = await lock.release();
assert.ok(first.released >= 3);
await first.settled; // every node's answer

// Two nodes down (here: their clients disconnected): a quorum of three still
// grants, and the token still increases.
clients[3]?.disconnect();
clients[4]?.disconnect();
const again = await redlock.acquire('ledger', 10_000);
assert.ok(again.fencingToken !== undefined && again.fencingToken > (lock.fencingToken ?? 0n));
await again.release();

// Three down: no quorum. That is QUORUM_UNREACHABLE, an outage, with each node's cause.
clients[2]?.disconnect();
const error = await redlock.tryAcquire('ledger', 10_000).catch((caught: unknown) => caught);
assert.ok(isQuorumLockError(error, ErrorCode.QUORUM_UNREACHABLE));
assert.equal(error.outcomes.filter((outcome) => outcome.status === 'error').length, 3);

console.log(`held on ${first.released} of 5 nodes; with 2 down still granted; with 3 down: ${error.code}`);
await Promise.all(clients.slice(0, 2).map((client) => client.quit()));
