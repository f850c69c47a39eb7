/**
 * close() at scale, in a process of its own: 1,000 locks held (by hand and
 * under using()) and 50 waiting acquires on 5 nodes, one of them down.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runToExit } from '../support/childFixture.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

let nodes: LocalNodeSet;
beforeAll(async () => {
  nodes = await startNodes(5);
});
afterAll(async () => {
  await nodes.stopAll();
});

it('releases 1,000 locks on every live node, turns 50 waiters away, leaves no timer or socket, and the process exits by itself', async () => {
  const down = nodes.endpoints[4]?.port as number;
  await nodes.node(4).kill();
  const ports = nodes.endpoints.map((endpoint) => endpoint.port).join(',');
  // A timer or a connection left behind would keep the child past this bound; it is then killed and fails below.
  const { code, signal, stdout, stderr } = await runToExit('test/integration/fixtures/closeMany.ts', [ports, String(down)], 100_000);
  expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  const seen = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  const summary = seen['summary'] as { released: number; failed: number; leftToExpire: number; rejected: number; timedOut: boolean };
  // The down node could not answer: every lock is released on the four others, and counted failed.
  expect(summary).toEqual({ released: 0, failed: 1000, leftToExpire: 0, rejected: 50, timedOut: false });
  expect(seen['closeMs']).toBeLessThan(seen['timeoutMs'] as number);
  expect(seen['heldLeft']).toEqual([0, 0, 0, 0]);
  // Nor a wait line, a lease or anything else of these resources.
  expect(seen['keysLeft']).toEqual([0, 0, 0, 0]);
  expect(seen['ticketsWithoutTtl']).toEqual([0, 0, 0, 0]);
  expect(seen['routineReasons']).toEqual({ QUORUMLOCK_LOCKER_CLOSED: 500 });
  expect(seen['waiterOutcomes']).toEqual({ QUORUMLOCK_LOCKER_CLOSED: 50 });
  expect(seen['listenersAfter']).toEqual(seen['listenersBefore']);
  expect(seen['resourcesLeft']).toEqual([]);
  for (const client of nodes.clients().slice(0, 4)) {
    expect((await client.keys('*close-many*')).filter((key) => !key.endsWith(':ticket'))).toEqual([]);
  }
}, 120_000);
