import { Command, Redis, type RedisOptions } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { encode, sharedCallSender } from '../../src/node/adapters/ioredisSharedCall.js';
import { extendManyScript } from '../../src/scripts/index.js';

describe('a script call framed once for every node (ioredis)', () => {
  it('is framed exactly as ioredis frames the same evalsha', () => {
    const call = { keys: ['plain', 'ünïcødé', '{tag}:x', ''], args: ['same', 10_000, 'v'.repeat(22), '0123456789'] };
    const ours = encode(extendManyScript.sha, call);
    const theirs = new Command('evalsha', [extendManyScript.sha, call.keys.length, ...call.keys, ...call.args]);
    theirs.promise.catch(() => undefined);
    expect(ours.bytes.toString('utf8')).toBe(theirs.toWritable({}));
    expect(ours.argv).toEqual(theirs.args.map(String));
    // Framed once: every node's command carries the same text.
    expect(encode(extendManyScript.sha, call)).toBe(ours);
    expect(encode('another sha', call).argv[0]).toBe('another sha');
  });

  it('is not offered where ioredis would change what it sends', () => {
    const make = (options: RedisOptions) => new Redis({ lazyConnect: true, ...options });
    const clients = [make({}), make({ keyPrefix: 'app:' }), make({ enableAutoPipelining: true }), make({ showFriendlyErrorStack: true })];
    try {
      expect(clients.map((client) => sharedCallSender(client) !== undefined)).toEqual([true, false, false, false]);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });
});
