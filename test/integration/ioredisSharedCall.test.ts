import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedCallSender } from '../../src/node/adapters/ioredisSharedCall.js';
import { extendManyScript } from '../../src/scripts/index.js';
import { readRenewals } from '../../src/scripts/extendMany.js';
import { type LocalNodeSet, startNodes } from '../support/harness.js';

describe('a script call framed once for every node, on a real node (ioredis)', () => {
  let nodes: LocalNodeSet;
  let client: Redis;

  beforeAll(async () => {
    nodes = await startNodes(1);
    client = nodes.clients()[0] as Redis;
  });
  afterAll(async () => {
    client.disconnect();
    await nodes.stopAll();
  });

  it('goes through evalsha once, framed once after, and answers the same', async () => {
    const send = sharedCallSender(client);
    expect(send).toBeDefined();
    await client.set('shared:a', 'value-a', 'PX', 5_000);
    await client.set('shared:b', 'value-b', 'PX', 5_000);
    const call = { keys: ['shared:a', 'shared:b', 'shared:c'], args: ['each', 'value-a', 60_000, 1, 'value-b', 60_000, 1, 'value-c', 60_000, 1] };
    const read = (reply: unknown) => readRenewals(reply, 3);
    const kinds: string[] = [];
    for (let i = 0; i < 3; i++) {
      // The first call after the node forgot the script is answered NOSCRIPT and sent again in full.
      if (i === 1) await client.script('FLUSH');
      const answer = extendManyScript.runShared(client, send, call, read);
      kinds.push(String(client.commandQueue.peekBack()?.command.constructor.name));
      expect(await answer).toEqual([true, true, false]);
    }
    // Learned from the first call which Command class this ioredis has; its own framing after.
    expect(kinds).toEqual(['Command', 'PreparedEvalsha', 'PreparedEvalsha']);
    expect(await client.pttl('shared:a')).toBeGreaterThan(50_000);
    expect(await client.exists('shared:c')).toBe(0);
  });
});
